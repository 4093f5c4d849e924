"""YAML files: compose, Kubernetes, CI workflows, SkyPilot/dstack tasks, and SGLang ``--config`` files.

The YAML is *composed* (ruamel.yaml, pure Python), never constructed: the node
graph gives every scalar's style and its start/end offsets in the text, and
no tag can make kv4lint build an object.  Each scalar that kv4lint reads gets
an :class:`~kv4lint.source.OffsetMap` from its value to the file, so that
findings point at the value's characters and fixes replace them in place,
comments and layout untouched.  Where the value is not written verbatim
(escapes, folded lines) the map keeps positions for reporting but no span
is editable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kv4lint.frontends import argv_lists, embedded
from kv4lint.frontends.argv_lists import Word
from kv4lint.frontends.embedded import TextBuilder
from kv4lint.frontends.hints import dedupe_hints, device_hints, env_hints, image_hints
from kv4lint.model import FileError, Hint, Provenance, ScanResult, Span, Value
from kv4lint.source import LineIndex, OffsetMap

# ---------------------------------------------------------------------------
# Composing


def compose(text: str, path: str) -> tuple[list, list[FileError]]:
    """The documents' root nodes (those read before any syntax error) and the errors."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    docs: list = []
    errors: list[FileError] = []
    try:
        y = YAML(typ="safe", pure=True)
        for doc in y.compose_all(text):
            if doc is not None:
                docs.append(doc)
    except MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else None
        what = (e.problem or e.context or "syntax error").strip()
        hint = " (a template, not YAML?)" if "{{" in text or "{%" in text else ""
        errors.append(FileError(path, f"cannot parse YAML{hint}: {what}", line))
    except YAMLError as e:
        errors.append(FileError(path, f"cannot parse YAML: {e}"))
    except RecursionError:
        errors.append(FileError(path, "YAML too deeply nested to read"))
    except Exception as e:  # noqa: BLE001 - the parser must not stop the run
        errors.append(FileError(path, f"cannot parse YAML ({type(e).__name__}: {e})"))
    return docs, errors


def is_map(node) -> bool:
    return type(node).__name__ == "MappingNode"


def is_seq(node) -> bool:
    return type(node).__name__ == "SequenceNode"


def is_scalar(node) -> bool:
    return type(node).__name__ == "ScalarNode"


def items(node) -> list[tuple[object, object]]:
    """A mapping's (key, value) pairs, merge keys (``<<``) expanded the way PyYAML does."""
    if not is_map(node):
        return []
    own = [(k, v) for k, v in node.value if not _is_merge(k)]
    merged: list[tuple[object, object]] = []
    for k, v in node.value:
        if _is_merge(k):
            sources = [v] if is_map(v) else [s for s in v.value if is_map(s)] if is_seq(v) else []
            for src in sources:
                merged.extend(items(src))
    if not merged:
        return own
    keys = {k.value for k, _ in own if is_scalar(k)}
    seen: set = set()
    out = []
    for k, v in merged:
        kv = k.value if is_scalar(k) else id(k)
        if kv in keys or kv in seen:
            continue
        seen.add(kv)
        out.append((k, v))
    return out + own


def _is_merge(k) -> bool:
    return is_scalar(k) and (k.tag == "tag:yaml.org,2002:merge" or (k.value == "<<" and k.style is None))


def get(node, key: str):
    for k, v in items(node):
        if is_scalar(k) and k.value == key:
            return v
    return None


def key_node(node, key: str):
    for k, v in items(node):
        if is_scalar(k) and k.value == key:
            return k
    return None


def scalar_text(node) -> str | None:
    return node.value if is_scalar(node) else None


def node_span(node) -> Span:
    return Span(node.start_mark.index, max(node.start_mark.index, node.end_mark.index))


# ---------------------------------------------------------------------------
# Scalars -> offset maps

_DQ_ESC = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r",
           "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0", "L": "\u2028",
           "P": "\u2029"}
_HEX = {"x": 2, "u": 4, "U": 8}


@dataclass
class ScalarMap:
    """A scalar's value and how its characters sit in the file."""

    value: str
    omap: OffsetMap
    verbatim: Span | None  # the file span of the whole value when it is written verbatim
    quote: str = ""


def _fallback(value: str, at: int) -> OffsetMap:
    b = TextBuilder()
    b.synthetic(value, at)
    return OffsetMap(b.outer + [at])


def scalar_map(text: str, node) -> ScalarMap:
    """Map a scalar node's value to the file (verbatim where it can)."""
    value = node.value
    s, e = node.start_mark.index, node.end_mark.index
    style = node.style
    omap: OffsetMap | None = None
    quote = ""
    try:
        if style in ("|", ">"):
            omap = _block_map(text, s, e, value, folded=style == ">")
        elif style in ("'", '"'):
            quote = style
            if text[s:s + 1] == style and text[e - 1:e] == style:
                omap = _flow_map(text, s + 1, e - 1, value, style)
        else:
            if text[s:e] == value:
                omap = OffsetMap.contiguous(s, len(value))
            else:
                omap = _flow_map(text, s, e, value, "")
    except (IndexError, ValueError):
        omap = None
    if omap is None:
        omap = _fallback(value, s)
    verbatim = omap.span(Span(0, len(value))) if value else None
    if verbatim is not None and text[verbatim.start:verbatim.end] != value:
        verbatim = None
    return ScalarMap(value, omap, verbatim, quote)


def _flow_map(text: str, s: int, e: int, value: str, style: str) -> OffsetMap | None:
    """Plain or quoted flow scalar between ``s`` and ``e``: fold lines, decode escapes."""
    b = TextBuilder()
    i = s
    pending_breaks: list[int] = []  # offsets of line breaks since the last content
    pending_space: list[tuple[str, int]] = []  # trailing white space of the current line (kept if no break follows)
    first = True
    while i < e:
        c = text[i]
        if c in "\r\n":
            pending_space.clear()
            pending_breaks.append(i)
            i += 2 if text[i:i + 2] == "\r\n" else 1
            while i < e and text[i] in " \t":  # leading white space of the next line
                i += 1
            continue
        if c in " \t":
            pending_space.append((c, i))
            i += 1
            continue
        # content character: flush pending folds/spaces
        if pending_breaks:
            if len(pending_breaks) == 1:
                b.synthetic(" ", pending_breaks[0])
            else:
                for off in pending_breaks[1:]:
                    b.synthetic("\n", off)
            pending_breaks.clear()
        for ch, off in pending_space:
            b.verbatim(ch, off)
        pending_space.clear()
        first = False
        if style == "'" and c == "'" and text[i + 1:i + 2] == "'":
            b.mapped("'", [i])
            i += 2
            continue
        if style == '"' and c == "\\":
            nxt = text[i + 1:i + 2]
            if nxt in ("\n", "\r"):  # escaped line break: joined without a space
                i += 1
                i += 2 if text[i:i + 2] == "\r\n" else 1
                while i < e and text[i] in " \t":
                    i += 1
                continue
            if nxt in _DQ_ESC:
                b.mapped(_DQ_ESC[nxt], [i])
                i += 2
                continue
            if nxt in _HEX:
                n = _HEX[nxt]
                digits = text[i + 2:i + 2 + n]
                if len(digits) != n or not re.fullmatch(r"[0-9a-fA-F]+", digits):
                    return None
                b.mapped(chr(int(digits, 16)), [i])
                i += 2 + n
                continue
            return None
        b.verbatim(c, i)
        i += 1
    for ch, off in pending_space:
        b.verbatim(ch, off)
    del first
    decoded, omap = b.build(end=e)
    if decoded != value:
        return None
    return omap


def _lines(text: str, start: int, end: int):
    """(line_start, content_end, break_end) for each line in ``text[start:end]``."""
    i = start
    while i < end:
        j = text.find("\n", i, end)
        if j < 0:
            yield i, end, end
            return
        ce = j - 1 if j > i and text[j - 1] == "\r" else j
        yield i, ce, j + 1
        i = j + 1


def _block_map(text: str, s: int, e: int, value: str, *, folded: bool) -> OffsetMap | None:
    nl = text.find("\n", s, e)
    if nl < 0:
        return OffsetMap([s] * (len(value) + 1)) if value == "" else None
    body = list(_lines(text, nl + 1, e))
    contents = [(ls, ce) for ls, ce, _ in body]
    indents = []
    for ls, ce in contents:
        k = ls
        while k < ce and text[k] == " ":
            k += 1
        if k < ce:
            indents.append(k - ls)
    if not indents:
        return OffsetMap([s] * (len(value) + 1)) if value.strip("\n") == "" else None
    auto = indents[0]
    for indent in [auto] + [n for n in range(1, auto) if n not in (auto,)]:
        omap = _block_try(text, contents, indent, value, folded, e)
        if omap is not None:
            return omap
    return None


def _block_try(text, contents, indent, value, folded, e) -> OffsetMap | None:
    b = TextBuilder()
    lines: list[tuple[str, int, int]] = []  # (content, file offset of content, offset of its line break)
    for ls, ce in contents:
        start = min(ls + indent, ce)
        if text[ls:start].strip(" ") != "":
            return None  # less indented content: not this indentation
        lines.append((text[start:ce], start, ce))
    if not folded:
        for content, off, brk in lines:
            b.verbatim(content, off)
            if brk < len(text) and text[brk] == "\n":
                b.verbatim("\n", brk)
            else:
                b.synthetic("\n", brk)
    else:
        prev = None  # kind of the previous content line: "normal" | "more"
        breaks: list[int] = []
        for content, off, brk in lines:
            if content == "":
                breaks.append(brk)
                continue
            kind = "more" if content[:1] in (" ", "\t") else "normal"
            if prev is None:
                for o in breaks:
                    b.synthetic("\n", o)
            elif prev == "normal" and kind == "normal":
                if len(breaks) == 1:
                    b.synthetic(" ", breaks[0])
                else:
                    for o in breaks[1:]:
                        b.synthetic("\n", o)
            else:
                for o in breaks:
                    b.synthetic("\n", o)
            b.verbatim(content, off)
            breaks = [brk]
            prev = kind
        for o in breaks:
            b.synthetic("\n", o)
    full, omap = b.build(end=e)
    if not full.startswith(value):
        return None
    n = len(value)
    return OffsetMap(omap.outer[:n] + [omap.outer[n] if n < len(omap.outer) else e])


def word_of(text: str, node, *, remove: Span | None = None, provenance: Provenance = Provenance.LITERAL) -> Word:
    """A scalar as one argv word (span when verbatim)."""
    sm = scalar_map(text, node)
    v = Value(sm.value, sm.verbatim, provenance, use=None if sm.verbatim else node_span(node),
              remove=remove, quote=sm.quote)
    return Word(v, sm.omap)


def sequence_words(text: str, node) -> list[Word] | None:
    """A sequence of scalars as argv words, each removable with its separator; None if not all scalars."""
    if not is_seq(node):
        return None
    elems = node.value
    if not all(is_scalar(x) for x in elems):
        return None
    flow = node.flow_style if hasattr(node, "flow_style") else None
    if flow is None:
        flow = text[node.start_mark.index:node.start_mark.index + 1] == "["
    removes: list[Span | None]
    if flow:
        removes = argv_lists.removal_spans([(x.start_mark.index, x.end_mark.index) for x in elems])
    else:
        removes = [_block_item_removal(text, x) for x in elems]
    return [word_of(text, x, remove=r) for x, r in zip(elems, removes)]


def _block_item_removal(text: str, node) -> Span | None:
    """The whole ``- item`` line(s), when the item is alone on them."""
    s, e = node.start_mark.index, node.end_mark.index
    ls = text.rfind("\n", 0, s) + 1
    prefix = text[ls:s]
    if not re.fullmatch(r"[ \t]*-[ \t]+", prefix):
        return None
    le = text.find("\n", e)
    le = len(text) if le < 0 else le + 1
    rest = text[e:le].strip()
    if rest and not rest.startswith("#"):
        return None
    return Span(ls, le)


def mapping_entry_removal(text: str, key, value) -> Span | None:
    """The whole ``key: value`` line(s) of a block mapping entry, when alone on them."""
    s = key.start_mark.index
    e = value.end_mark.index
    ls = text.rfind("\n", 0, s) + 1
    if text[ls:s].strip(" \t") != "":
        return None
    le = text.find("\n", e)
    le = len(text) if le < 0 else le + 1
    rest = text[e:le].strip()
    if rest and not rest.startswith("#"):
        return None
    if e > s and text[e - 1] == "\n":  # a block scalar ends after its line break
        return Span(ls, e)
    return Span(ls, le)


# ---------------------------------------------------------------------------
# Hints from YAML structures

_RESOURCE_PLATFORMS = (
    ("nvidia.com/", "cuda"), ("amd.com/gpu", "rocm"), ("gpu.intel.com/", "xpu"), ("habana.ai/", "hpu"),
    ("huawei.com/ascend", "npu"), ("mthreads.com/", "musa"),
)


def resource_hints(text: str, resources) -> list[Hint]:
    """Kubernetes ``resources.limits``/``requests`` device plugins (``amd.com/gpu: 8``) -> platform."""
    out: list[Hint] = []
    for part in ("limits", "requests"):
        for k, _ in items(get(resources, part)):
            name = scalar_text(k)
            if not name:
                continue
            low = name.lower()
            for prefix, plat in _RESOURCE_PLATFORMS:
                if low.startswith(prefix):
                    out.append(Hint("platform", plat, f"resources {name}", node_span(k)))
                    break
    return out


def accelerator_hints(name: str, span: Span | None, how: str = "accelerators") -> list[Hint]:
    """A GPU named by a scheduler (SkyPilot ``accelerators: B200:8``) -> GPU arch and platform."""
    from kv4lint.target import normalise_gpu

    n = name.split(":", 1)[0].strip()
    low = n.lower()
    if not low:
        return []
    reason = f"{how} {n}"
    if re.match(r"^(?:amd-?)?(?:instinct-?)?mi\d{3}", low):
        return [Hint("platform", "rocm", reason, span)]
    if low.startswith(("gaudi", "hl-")):
        return [Hint("platform", "hpu", reason, span)]
    if low.startswith(("tpu", "trainium", "inferentia")):
        return []
    try:
        arch = normalise_gpu(n)
    except ValueError:
        return []
    return [Hint("gpu", arch, reason, span), Hint("platform", "cuda", reason, span)]


# ---------------------------------------------------------------------------
# Environment blocks


@dataclass
class EnvVar:
    name: str
    value: str | None  # None: set, but not known statically (valueFrom, an expression)
    smap: ScalarMap | None = None
    span: Span | None = None  # the whole entry, for hints


@dataclass
class Env:
    vars: dict[str, EnvVar] = field(default_factory=dict)

    def add(self, var: EnvVar) -> None:
        self.vars[var.name] = var

    def copy(self) -> "Env":
        return Env(dict(self.vars))

    def values(self) -> dict[str, str]:
        return {k: v.value for k, v in self.vars.items() if v.value is not None}

    def defs(self) -> list[embedded.EnvDef]:
        return [embedded.EnvDef(v.name, v.value, v.smap.omap if v.smap is not None else None, v.span)
                for v in self.vars.values()]

    def hints(self, how: str) -> list[Hint]:
        out: list[Hint] = []
        for v in self.vars.values():
            out.extend(env_hints(v.name, v.value, v.span, how=how))
        return out


_EXPR = re.compile(r"\$\{\{.*?\}\}", re.S)  # GitHub Actions expressions


def read_env(text: str, node, env: Env, *, unknown_if=None) -> None:
    """``KEY: value`` mappings, ``- KEY=value`` lists, and Kubernetes ``- name: K / value: V`` lists."""
    if is_map(node):
        for k, v in items(node):
            name = scalar_text(k)
            if not name:
                continue
            if is_map(v):  # GitLab ``VAR: {value: x, description: ...}``
                v = get(v, "value")
            if v is None or not is_scalar(v):
                env.add(EnvVar(name, None, None, node_span(k)))
                continue
            sm = scalar_map(text, v)
            unknown = unknown_if is not None and unknown_if(sm.value)
            env.add(EnvVar(name, None if unknown else sm.value, None if unknown else sm,
                           Span(k.start_mark.index, v.end_mark.index)))
    elif is_seq(node):
        for item in node.value:
            if is_scalar(item):
                raw = item.value
                if "=" not in raw:
                    continue
                name, _, val = raw.partition("=")
                sm = scalar_map(text, item)
                off = len(name) + 1
                sub = OffsetMap(sm.omap.outer[off:])
                vspan = sub.span(Span(0, len(val))) if val else None
                env.add(EnvVar(name.strip(), val, ScalarMap(val, sub, vspan, sm.quote), node_span(item)))
            elif is_map(item):
                name = scalar_text(get(item, "name"))
                if not name:
                    continue
                v = get(item, "value")
                if v is not None and is_scalar(v) and get(item, "valueFrom") is None:
                    sm = scalar_map(text, v)
                    unknown = unknown_if is not None and unknown_if(sm.value)
                    env.add(EnvVar(name, None if unknown else sm.value, None if unknown else sm, node_span(item)))
                else:
                    env.add(EnvVar(name, None, None, node_span(item)))


# ---------------------------------------------------------------------------
# The scanner

_K8S_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
_COMPOSE_REF = re.compile(r"\$\$|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*")


class _Yaml:
    def __init__(self, text: str, path: str, result: ScanResult):
        self.text = text
        self.path = path
        self.result = result
        self.index = LineIndex(text)
        self.done: set[int] = set()
        self.defs: list[embedded.EnvDef] = []

    def line(self, node) -> int:
        return node.start_mark.line + 1

    # -- shell text in a scalar ------------------------------------------------
    def shell_scalar(self, node, *, env: Env, hints: list[Hint], what: str, gha: bool = False) -> None:
        if not is_scalar(node) or id(node) in self.done:
            return
        self.done.add(id(node))
        sm = scalar_map(self.text, node)
        body = _EXPR.sub(lambda m: "${" + "_" * (len(m.group()) - 3) + "}", sm.value) if gha else sm.value
        self.run_shell(body, sm.omap, env, hints, what, self.line(node))

    def run_shell(self, body: str, omap: OffsetMap, env: Env, hints: list[Hint], what: str, line: int) -> None:
        defs = env.defs()
        self.defs.extend(defs)
        full, fmap, values = embedded.with_prelude(defs, body, omap)
        sub = embedded.scan_shell_text(full, self.path, fmap, env=values, hints=hints, what=what, line=line,
                                     file_text=self.text)
        embedded.merge(self.result, sub, text=self.text, index=self.index, opener=self.index.offset(line, 1))

    def shell_lines(self, nodes: list, *, env: Env, hints: list[Hint], what: str) -> None:
        """Script lines (GitLab ``script:``, dstack ``commands:``) run one after another in one shell."""
        b = TextBuilder()
        first = None
        for n in nodes:
            if not is_scalar(n) or id(n) in self.done:
                continue
            self.done.add(id(n))
            first = first or n
            sm = scalar_map(self.text, n)
            b.mapped(sm.value, sm.omap.outer)
            b.synthetic("\n", sm.omap.outer[-1] if sm.omap.outer else n.end_mark.index)
        if first is None:
            return
        body, omap = b.build()
        self.run_shell(body, omap, env, hints, what, self.line(first))

    # -- argv lists ----------------------------------------------------------
    def words(self, node) -> list[Word] | None:
        """A command given as a list (exec form) or a string (split, no shell), as words."""
        if node is None:
            return []
        if is_seq(node):
            return sequence_words(self.text, node)
        if is_scalar(node):
            sm = scalar_map(self.text, node)
            vals = embedded.split_shell_words(sm.value, sm.omap)
            if vals is None:
                return None
            return [Word(v) for v in vals]
        return None

    def launch_words(self, words: list[Word], *, env: Env, hints: list[Hint], what: str,
                     fallback: list[Word] | None = None, opener=None) -> None:
        defs = env.defs()
        self.defs.extend(defs)
        sub = argv_lists.launches_from_words(words, self.path, env=env.values(), hints=hints, language="yaml",
                                         what=what, defs=defs, file_text=self.text)
        if not sub.launches and not sub.errors and fallback:
            sub = argv_lists.launches_from_words(fallback, self.path, env=env.values(), hints=hints, language="yaml",
                                             what=what, defs=defs, file_text=self.text)
        if opener is not None:
            embedded.apply_disabled(sub, self.text, self.index, opener.start_mark.index)
        embedded.merge(self.result, sub)

    # -- documents -------------------------------------------------------------
    def document(self, root) -> None:
        from kv4lint.frontends import sglang_config

        if sglang_config.looks_like_config(root):
            launch = sglang_config.config_launch(self.text, self.path, root)
            if launch is not None:
                self.result.launches.append(launch)
            return
        if not is_map(root):
            self.walk_containers(root)
            return
        self.compose(root)
        self.github(root)
        self.gitlab(root)
        self.task(root)
        self.walk_containers(root)

    # docker compose
    def compose(self, root) -> None:
        services = get(root, "services")
        if not is_map(services):
            return
        for _, svc in items(services):
            if not is_map(svc) or id(svc) in self.done:
                continue
            self.done.add(id(svc))
            hints: list[Hint] = []
            env = Env()
            read_env(self.text, get(svc, "environment"), env, unknown_if=lambda s: "$" in s)
            hints += env.hints("environment")
            image = get(svc, "image")
            if is_scalar(image):
                hints += image_hints(image.value, scalar_map(self.text, image).verbatim or node_span(image))
            devs = get(svc, "devices")
            if is_seq(devs):
                hints += device_hints([(d.value, node_span(d)) for d in devs.value if is_scalar(d)],
                                      how="devices:")
            for dev in _seq(get(get(get(get(svc, "deploy"), "resources"), "reservations"), "devices")):
                driver = scalar_text(get(dev, "driver"))
                if driver and driver.lower() == "nvidia":
                    hints.append(Hint("platform", "cuda", "deploy devices driver: nvidia", node_span(dev)))
            hints = dedupe_hints(hints)
            ep = self.words(get(svc, "entrypoint"))
            cmd = self.words(get(svc, "command"))
            if ep is None or cmd is None:
                continue
            ep = [self.compose_word(w) for w in ep]
            cmd = [self.compose_word(w) for w in cmd]
            opener = key_node(svc, "command") or key_node(svc, "entrypoint")
            if ep:
                self.launch_words(ep + cmd, env=env, hints=hints, what="entrypoint", fallback=cmd, opener=opener)
            elif cmd:
                self.launch_words(cmd, env=env, hints=hints, what="command", opener=opener)

    def compose_word(self, w: Word) -> Word:
        """Compose interpolates ``${VAR}`` from the host before the container starts: unknown here."""
        t = w.text
        if t is None or "$" not in t:
            return w
        if _COMPOSE_REF.sub(lambda m: "" if m.group() == "$$" else "\0", t).find("\0") >= 0:
            if " " in t:  # a script for ``sh -c`` keeps its text: the shell reads what compose leaves
                return w
            return Word(Value.unknown(w.value.anchor), None)
        b = TextBuilder()
        outer = w.omap.outer if w.omap is not None else None
        k = 0
        while k < len(t):
            if t.startswith("$$", k):
                if outer:
                    b.mapped("$", [outer[k + 1]])
                else:
                    b.synthetic("$", 0)
                k += 2
            else:
                if outer:
                    b.mapped(t[k], [outer[k]])
                else:
                    b.synthetic(t[k], 0)
                k += 1
        new, omap = b.build()
        return Word(Value(new, None, Provenance.LITERAL, use=w.value.anchor, remove=w.value.remove),
                    omap if outer else None)

    # GitHub Actions (workflows and composite actions)
    def github(self, root) -> None:
        jobs = get(root, "jobs")
        wf_env = Env()
        read_env(self.text, get(root, "env"), wf_env, unknown_if=lambda s: "${{" in s)
        groups = []
        if is_map(jobs):
            for _, job in items(jobs):
                if is_map(job):
                    groups.append(job)
        runs = get(root, "runs")
        if is_map(runs):
            groups.append(runs)
        for job in groups:
            env = wf_env.copy()
            read_env(self.text, get(job, "env"), env, unknown_if=lambda s: "${{" in s)
            hints: list[Hint] = []
            container = get(job, "container")
            image = container if is_scalar(container) else get(container, "image")
            if is_scalar(image) and "${{" not in image.value:
                hints += image_hints(image.value, scalar_map(self.text, image).verbatim or node_span(image))
            for step in _seq(get(job, "steps")):
                run = get(step, "run")
                if not is_scalar(run):
                    continue
                senv = env.copy()
                read_env(self.text, get(step, "env"), senv, unknown_if=lambda s: "${{" in s)
                shell = (scalar_text(get(step, "shell")) or "").split(" ", 1)[0]
                step_hints = dedupe_hints(senv.hints("env:") + hints)
                if shell.startswith("python"):
                    if id(run) not in self.done:
                        self.done.add(id(run))
                        sm = scalar_map(self.text, run)
                        embedded.merge(self.result, embedded.scan_python_text(sm.value, self.path, sm.omap,
                                                                          what="run: step", line=self.line(run)))
                    continue
                if shell and shell not in ("bash", "sh", "zsh"):
                    continue
                self.shell_scalar(run, env=senv, hints=step_hints, what="run: step", gha=True)

    # GitLab CI
    def gitlab(self, root) -> None:
        gl_env = Env()
        read_env(self.text, get(root, "variables"), gl_env)
        default = get(root, "default")
        root_image = get(root, "image") or get(default, "image")
        for name_node, job in items(root):
            if not is_map(job):
                continue
            keys = ("before_script", "script", "after_script")
            if not any(get(job, k) is not None for k in keys):
                continue
            env = gl_env.copy()
            read_env(self.text, get(job, "variables"), env)
            image = get(job, "image") or root_image
            if is_map(image):
                image = get(image, "name")
            hints = env.hints("variables:")
            if is_scalar(image) and "$" not in image.value:
                hints += image_hints(image.value, scalar_map(self.text, image).verbatim or node_span(image))
            lines: list = []
            for k in keys:
                node = get(job, k)
                if k == "before_script" and node is None:
                    node = get(default, "before_script")
                lines.extend(_flatten(node))
            self.shell_lines(lines, env=env, hints=dedupe_hints(hints), what=f"job {scalar_text(name_node)}")

    # SkyPilot and dstack tasks
    def task(self, root) -> None:
        run, setup, commands = get(root, "run"), get(root, "setup"), get(root, "commands")
        if not (is_scalar(run) or is_scalar(setup) or is_seq(commands)):
            return
        env = Env()
        read_env(self.text, get(root, "envs"), env)
        read_env(self.text, get(root, "env"), env)
        hints = env.hints("envs:")
        image = get(root, "image")
        for res in [get(root, "resources")] + _seq(get(get(root, "resources"), "any_of")) + \
                _seq(get(get(root, "resources"), "ordered")):
            if not is_map(res):
                continue
            img = get(res, "image_id")
            if is_scalar(img) and img.value.startswith("docker:"):
                sm = scalar_map(self.text, img)
                sub = sm.omap.span(Span(7, len(sm.value))) if sm.verbatim else None
                hints += image_hints(img.value[7:], sub or node_span(img))
            acc = get(res, "accelerators")
            names = []
            if is_scalar(acc):
                names = [(acc.value, node_span(acc))]
            elif is_map(acc):
                names = [(k.value, node_span(k)) for k, _ in items(acc) if is_scalar(k)]
            elif is_seq(acc):
                names = [(a.value, node_span(a)) for a in acc.value if is_scalar(a)]
            if len(names) == 1:  # several candidates: the GPU is not known
                hints += accelerator_hints(*names[0])
        if is_scalar(image):
            hints += image_hints(image.value, scalar_map(self.text, image).verbatim or node_span(image))
        hints = dedupe_hints(hints)
        if is_scalar(setup):
            self.shell_scalar(setup, env=env, hints=hints, what="setup:")
        if is_scalar(run):
            self.shell_scalar(run, env=env, hints=hints, what="run:")
        if is_seq(commands):
            self.shell_lines(commands.value, env=env, hints=hints, what="commands:")

    # Kubernetes (Pod, Deployment, StatefulSet, Job, LeaderWorkerSet, ...) and Argo containers
    def walk_containers(self, root) -> None:
        stack = [root]
        seen: set[int] = set()
        while stack:
            n = stack.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            if is_map(n):
                for k, v in items(n):
                    key = scalar_text(k)
                    if key in ("containers", "initContainers", "ephemeralContainers") and is_seq(v):
                        for c in v.value:
                            if is_map(c):
                                self.container(c)
                    elif key == "container" and is_map(v) and get(v, "image") is not None:
                        self.container(v)
                    stack.append(v)
            elif is_seq(n):
                stack.extend(n.value)

    def container(self, c) -> None:
        if id(c) in self.done:
            return
        self.done.add(id(c))
        env = Env()
        read_env(self.text, get(c, "env"), env)
        hints = env.hints("env:")
        image = get(c, "image")
        if is_scalar(image):
            hints += image_hints(image.value, scalar_map(self.text, image).verbatim or node_span(image))
        res = get(c, "resources")
        if is_map(res):
            hints += resource_hints(self.text, res)
        hints = dedupe_hints(hints)
        command = self.words(get(c, "command"))
        args = self.words(get(c, "args"))
        if command is None or args is None:
            return
        refs = sum(len(re.findall(r"\$\(" + re.escape(n) + r"\)", w.text or "")) for w in command + args
                   for n in env.vars)
        words = [self.k8s_expand(w, env, shared=refs > 1) for w in command + args]
        opener = key_node(c, "command") or key_node(c, "args")
        if command:
            self.launch_words(words, env=env, hints=hints, what="command",
                              fallback=words[len(command):], opener=opener)
        elif args:
            self.launch_words(words, env=env, hints=hints, what="args", opener=opener)

    def k8s_expand(self, w: Word, env: Env, *, shared: bool) -> Word:
        """Kubernetes expands ``$(VAR)`` in command/args from the container's ``env`` (``$$`` escapes)."""
        t = w.text
        if t is None or "$" not in t:
            return w
        b = TextBuilder()
        outer = w.omap.outer if w.omap is not None else None
        pos = 0
        resolved = False
        unknown = False
        for m in _K8S_REF.finditer(t):
            seg = t[pos:m.start()]
            if outer:
                b.mapped(seg, outer[pos:m.start()])
            else:
                b.synthetic(seg, 0)
            if m.group() == "$$":
                b.mapped("$", [outer[m.start() + 1]] if outer else [0])
            else:
                var = env.vars.get(m.group(1))
                if var is None or var.value is None:
                    unknown = True
                    if outer:
                        b.mapped(m.group(), outer[m.start():m.end()])
                    else:
                        b.synthetic(m.group(), 0)
                else:
                    resolved = True
                    if var.smap is not None:
                        b.mapped(var.value, var.smap.omap.outer)
                    else:
                        b.synthetic(var.value, 0)
            pos = m.end()
        if outer:
            b.mapped(t[pos:], outer[pos:])
        else:
            b.synthetic(t[pos:], 0)
        new, omap = b.build()
        is_script = " " in t
        if unknown and not is_script:
            return Word(Value.unknown(w.value.anchor), None)
        span = omap.span(Span(0, len(new))) if new else None
        if span is not None and self.text[span.start:span.end] != new:
            span = None
        prov = Provenance.RESOLVED if resolved else Provenance.LITERAL
        v = Value(new, span, prov, use=w.value.anchor if resolved else w.value.use,
                  shared=shared and resolved, remove=w.value.remove, quote=w.value.quote)
        return Word(v, omap)


def _seq(node) -> list:
    return list(node.value) if is_seq(node) else []


def _flatten(node) -> list:
    if node is None:
        return []
    if is_scalar(node):
        return [node]
    if is_seq(node):
        out = []
        for x in node.value:
            out.extend(_flatten(x))
        return out
    return []


def scan_yaml(text: str, path: str) -> ScanResult:
    """Launches in a YAML file (see the module docstring); a syntax error is a FileError, never raised."""
    from kv4lint.frontends import sglang_config

    result = ScanResult()
    docs, errors = compose(text, path)
    result.errors.extend(errors)
    sc = _Yaml(text, path, result)
    for doc in docs:
        try:
            sc.document(doc)
        except RecursionError:
            result.errors.append(FileError(path, "YAML too deeply nested to scan", doc.start_mark.line + 1))
        except Exception as e:  # noqa: BLE001 - one document must not stop the others
            result.errors.append(FileError(path, f"internal error while scanning YAML ({type(e).__name__}: {e})",
                                           doc.start_mark.line + 1))
    embedded.mark_shared(result, text, sc.defs)
    embedded.apply_disabled(result, text, sc.index)
    try:
        sglang_config.attach_configs(result, path)
    except Exception as e:  # noqa: BLE001
        result.errors.append(FileError(path, f"internal error while reading a --config file ({type(e).__name__}: {e})"))
    result.launches.sort(key=lambda launch: (launch.span.start, launch.anchor.start))
    return result
