"""YAML files: compose, Kubernetes and the operators built on it (OME, RoleBasedGroup, KServe, Helm values), CI
workflows, SkyPilot/dstack tasks, srt-slurm recipes, and SGLang ``--config`` files.

The YAML is *composed* (ruamel.yaml, pure Python), never constructed: the node
graph gives every scalar's style and its start/end offsets in the text, and
no tag can make kv4lint build an object.  Each scalar that kv4lint reads gets
an :class:`~kv4lint.base.source.OffsetMap` from its value to the file, so that
findings point at the value's characters and fixes replace them in place,
comments and layout untouched.  Where the value is not written verbatim
(escapes, folded lines) the map keeps positions for reporting but no span
is editable.
"""

from __future__ import annotations

import re
from collections import ChainMap
from collections.abc import MutableMapping
from dataclasses import dataclass, field

from kv4lint.base import internal_error
from kv4lint.frontends import argv_lists, embedded, sglang_config
from kv4lint.frontends.argv_lists import Word
from kv4lint.frontends.comments import outside
from kv4lint.frontends.embedded import TextBuilder
from kv4lint.frontends.env_launchers import Setting, env_launch
from kv4lint.frontends.hints import PLATFORM_NAMES, dedupe_hints, device_hints, env_hints, image_hints, node_hints, \
    scheduler_hints, short
from kv4lint.frontends.yaml_nodes import ScalarMap, compose, get, is_map, is_scalar, is_seq, items, key_node, \
    node_span, scalar_map, scalar_text, sequence_words
from kv4lint.base.file_error import FileError
from kv4lint.base.model import ForeignString, Hint, Launch, Provenance, ScanResult, Span, Value
from kv4lint.base.source import LineIndex, OffsetMap
from kv4lint.sglang.commands import SHELLS, unwrap
from kv4lint.sglang.launchers import profile_arg_key

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


def accelerator_hints(names: list[tuple[str, Span | None]], how: str = "accelerators") -> list[Hint]:
    """GPUs a task asks for (SkyPilot ``accelerators: B200:8``, ``{H100:8, A100-80GB:8}``; srt-slurm ``gpu_type``;
    dstack ``gpu: H100:8``): one candidate set, and the platform they imply."""
    names = [(n.split(":", 1)[0].strip() if not n.lower().startswith(("nvidia:", "amd:")) else n, span)
             for n, span in names if n and n.strip()]
    if not names:
        return []
    reason = f"{how} {', '.join(n for n, _ in names)}"
    return scheduler_hints([n for n, _ in names], short(reason, 70), names[0][1])


_DSTACK_NOT_A_NAME = re.compile(r"^(?:\d+(?:\.\.\d*)?|\.\.\d+|\d*(?:gb|mb)?\.\.\d*(?:gb|mb)?|\d+(?:gb|mb)"
                                r"|nvidia|amd|tpu|intel|tenstorrent)$", re.I)


def dstack_gpu_names(node) -> list[tuple[str, Span | None]]:
    """The GPU names of a dstack ``resources.gpu``: ``H100:8``, ``A100:80GB:8``, ``nvidia:B200:8``,
    ``A100,H100:8``, ``{name: [H100, H200], count: 8}``; memory and counts (``80GB:8``, ``1..8``) name none."""
    if is_map(node):
        name = get(node, "name")
        values = [name] if is_scalar(name) else _seq(name)
        return [(v.value, node_span(v)) for v in values if is_scalar(v) and v.value]
    if not is_scalar(node):
        return []
    out = []
    for part in str(node.value).split(":"):
        for word in part.split(","):
            word = word.strip()
            if word and not _DSTACK_NOT_A_NAME.match(word):
                out.append((word, node_span(node)))
    return out


def pod_node_hints(pod) -> list[Hint]:
    """A pod spec's ``nodeSelector`` and required node affinity, read by :func:`kv4lint.frontends.hints.node_hints`."""
    selector = [(scalar_text(k) or "", str(v.value), Span(k.start_mark.index, v.end_mark.index))
                for k, v in items(get(pod, "nodeSelector")) if is_scalar(v) and v.value is not None]
    required = get(get(get(pod, "affinity"), "nodeAffinity"), "requiredDuringSchedulingIgnoredDuringExecution")
    terms = [[(scalar_text(get(e, "key")) or "", scalar_text(get(e, "operator")) or "",
               [str(x.value) for x in _seq(get(e, "values")) if is_scalar(x)], node_span(e))
              for e in _seq(get(t, "matchExpressions"))] for t in _seq(get(required, "nodeSelectorTerms"))]
    return node_hints(selector, terms)


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
    vars: MutableMapping[str, EnvVar] = field(default_factory=dict)
    order: MutableMapping[str, int] = field(default_factory=dict)  # each name's place (its first setting)
    size: int = 0  # how many names

    def add(self, var: EnvVar) -> None:
        if var.name not in self.vars:
            self.order[var.name] = self.size
            self.size += 1
        self.vars[var.name] = var

    def copy(self) -> "Env":
        """The settings of a job or step within this one: its own over these, which it does not copy (a workflow's
        steps each with an ``env:`` under a job of many settings cost steps times settings)."""
        return Env(ChainMap({}, self.vars), ChainMap({}, self.order), self.size)

    def _in_order(self, names) -> list[EnvVar]:
        """The settings of ``names`` that are set, in their order (as many as ``names``: not every setting)."""
        return [self.vars[n] for n in sorted((n for n in names if n in self.vars), key=self.order.__getitem__)]

    def values(self) -> dict[str, str]:
        return {k: v.value for k, v in self.vars.items() if v.value is not None}

    def defs(self, body: str | None = None) -> list[embedded.EnvDef]:
        """The definitions, or those shell text ``body`` may read (kv4lint.frontends.embedded.names_read)."""
        chosen = self.vars.values() if body is None else \
            self._in_order(embedded.names_read(body, self.vars, lambda v: v.value))
        return [embedded.EnvDef(v.name, v.value, v.smap.omap if v.smap is not None else None, v.span) for v in chosen]

    def hints(self, how: str) -> list[Hint]:
        """What the platform's settings say (each step asks: the platform's names are looked up, not every
        setting read)."""
        out: list[Hint] = []
        for v in self._in_order(PLATFORM_NAMES):
            out.extend(env_hints(v.name, v.value, v.span, how=how))
        return out


_EXPR = re.compile(r"\$\{\{.*?\}\}", re.S)  # GitHub Actions expressions
_K8S_REF = re.compile(r"\$\(([^()]*)\)")  # Kubernetes' $(VAR) in command and args


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
            # an alias value (``KV: *kv``) is its anchor's node, written before the key: the entry is the key
            after = v.start_mark.index >= k.end_mark.index
            env.add(EnvVar(name, None if unknown else sm.value, None if unknown else sm,
                           Span(k.start_mark.index, v.end_mark.index) if after else node_span(k)))
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


def _copy(b: TextBuilder, t: str, outer: list[int] | None, s: int, e: int) -> None:
    if outer:
        b.mapped(t[s:e], outer[s:e])
    else:
        b.synthetic(t[s:e], 0)


_DOTENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-[^}]*)?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def _interpolate(w: Word, values: dict[str, str | None]) -> tuple[Word, list[tuple[int, int, str, Span | None]]]:
    """``w`` with the ``${VAR}``/``$VAR``/``${VAR:-x}`` that ``values`` knows replaced (not editable there),
    and each replacement as ``(start, end, value, use)``: where the value stands in the new text, and the
    reference's span in the file."""
    t = w.text
    outer = w.omap.outer if w.omap is not None else None
    b = TextBuilder()
    at = 0
    refs: list[tuple[int, int, str, Span | None]] = []
    for m in _DOTENV_REF.finditer(t):
        name = m.group(1) or m.group(2)
        value = values.get(name)
        if value is None or (at < m.start() and t[m.start() - 1] == "$"):
            continue
        _copy(b, t, outer, at, m.start())
        use = w.omap.anchor(Span(m.start(), m.end())) if outer else w.value.anchor
        refs.append((len(b), len(b) + len(value), value, use))
        b.synthetic(value, w.omap.offset(m.start()) if outer else 0)
        at = m.end()
    if not refs:
        return w, refs
    _copy(b, t, outer, at, len(t))
    new, omap = b.build()
    return Word(Value(new, None, Provenance.RESOLVED, use=w.value.anchor, remove=w.value.remove),
                omap if outer else None), refs


def _from_env_file(v: Value, at: tuple[int, int], refs: list[tuple[int, int, str, Span | None]]) -> Value:
    """``v`` (a word at ``at`` in the interpolated text) as the setting it is when it is one reference's whole
    value, written verbatim in the ``.env`` file: fixed there, as unsafe (other services read that file)."""
    for start, end, value, use in refs:
        if (start, end) == at and isinstance(value, ForeignString) and value.path is not None and v.text == value:
            return Value(str(value), value.span(), Provenance.RESOLVED, use=use, shared=True, remove=v.remove,
                         path=value.path)
    return v


class _Yaml:
    def __init__(self, text: str, path: str, result: ScanResult, env_files: dict | None = None):
        self.env_files: dict[str, dict[str, ForeignString]] = dict(env_files or {})
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
        defs = env.defs(body)
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
            b.synthetic("\n", sm.omap.outer[-1])
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
        if sglang_config.looks_like_config(root):
            launch = sglang_config.config_launch(self.text, self.path, root)
            if launch is not None:
                self.result.launches.append(launch)
            return
        if not is_map(root):
            self.walk_containers(root)
            return
        self.compose(root)
        self.srt_recipe(root)
        self.github(root)
        self.gitlab(root)
        self.task(root)
        self.ray_job(root)
        self.walk_containers(root)

    # srt-slurm recipes: ``backend.sglang_config`` holds a map of SGLang options per worker mode
    def srt_recipe(self, root) -> None:
        """An srt-slurm recipe (``srtctl apply -f recipe.yaml``): each mode map of ``backend.sglang_config``
        (``prefill``, ``decode``, ``aggregated``) becomes the options of ``python3 -m sglang.launch_server`` (or
        ``dynamo.sglang``, which parses SGLang's server arguments), ``key: value`` -> ``--key value``.  The GPU
        is ``resources.gpu_type``; the image ``model.container`` when it is an image reference."""
        backend = get(root, "backend")
        if not is_map(backend):
            return
        kind = scalar_text(get(backend, "type"))
        config = get(backend, "sglang_config")
        if (kind and kind != "sglang") or not is_map(config):
            return
        hints: list[Hint] = []
        gpu = get(get(root, "resources"), "gpu_type")
        if is_scalar(gpu) and gpu.value:
            hints += accelerator_hints([(gpu.value, node_span(gpu))], how="resources.gpu_type")
        image = get(get(root, "model"), "container")
        if is_scalar(image) and ("/" in image.value or ":" in image.value):
            hints += image_hints(image.value, scalar_map(self.text, image).verbatim or node_span(image))
        for mode in ("prefill", "decode", "aggregated"):
            options = get(config, mode)
            if not is_map(options) or id(options) in self.done:
                continue
            self.done.add(id(options))
            tokens = sglang_config.config_tokens(self.text, options, srtctl=True)
            if not tokens:
                continue
            env = Env()
            read_env(self.text, get(backend, f"{mode}_environment"), env)
            anchor = node_span(key_node(config, mode))
            for k, _ in items(options):
                if is_scalar(k) and k.value.replace("_", "-") in sglang_config.STRONG_KEYS:
                    anchor = node_span(k)
                    break
            self.result.launches.append(Launch(
                path=self.path, form="argv", entry="sglang config", span=node_span(options), anchor=anchor,
                argv=tokens, hints=dedupe_hints(hints + env.hints(f"backend.{mode}_environment")), language="yaml",
                location=f"backend.sglang_config.{mode}"))

    # docker compose
    def compose(self, root) -> None:
        services = get(root, "services")
        if not is_map(services):
            return
        if "envfile:.env" not in self.result.sources:
            self.result.sources.append("envfile:.env")  # compose reads .env beside the file for ${VAR}
        for _, svc in items(services):
            if not is_map(svc) or id(svc) in self.done:
                continue
            self.done.add(id(svc))
            hints: list[Hint] = []
            env = Env()
            self.env_file(get(svc, "env_file"), env)
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
            ep = self.compose_words(get(svc, "entrypoint"))
            cmd = self.compose_words(get(svc, "command"))
            if get(svc, "entrypoint") is None and get(svc, "command") is None and is_scalar(image):
                self.env_launch(image, env, svc, hints)  # the image's own program, from its environment
            if ep is None or cmd is None:
                continue
            ep = [self.compose_word(w) for w in ep]
            cmd = [self.compose_word(w) for w in cmd]
            opener = key_node(svc, "command") or key_node(svc, "entrypoint")
            if ep:
                self.launch_words(ep + cmd, env=env, hints=hints, what="entrypoint", fallback=cmd, opener=opener)
            elif cmd:
                self.launch_words(cmd, env=env, hints=hints, what="command", opener=opener)

    def env_launch(self, image, env: Env, owner, hints: list[Hint]) -> None:
        """A container of a launcher image that builds SGLang's command from its environment (RunPod's
        worker-sglang): the launch its variables select (:mod:`kv4lint.frontends.env_launchers`)."""
        settings = []
        for var in env.vars.values():
            sm = var.smap
            foreign = var.value if isinstance(var.value, ForeignString) else None
            settings.append(Setting(var.name, var.value, foreign.span() if foreign is not None else (
                sm.verbatim if sm is not None else None), var.span, path=foreign.path if foreign is not None else None,
                shared=foreign is not None))
        launch = env_launch(image.value, settings, path=self.path, span=node_span(owner), anchor=node_span(image),
                            language="yaml", hints=hints)
        if launch is not None:
            self.result.launches.append(launch)

    def env_file(self, node, env: Env) -> None:
        """``env_file:`` (a path, a list of paths or of ``{path: ...}``): its variables, when the pipeline read it."""
        names = [n for n in ([node] if is_scalar(node) else _seq(node))]
        for n in names:
            if is_map(n):
                n = get(n, "path")
            if not is_scalar(n) or not n.value:
                continue
            ref = f"envfile:{n.value}"
            if ref not in self.result.sources:
                self.result.sources.append(ref)
            for name, value in self.env_files.get(ref, {}).items():
                env.add(EnvVar(name, value, None, node_span(n)))

    def compose_words(self, node) -> list[Word] | None:
        """:meth:`words`, a string's ``${VAR}`` interpolated from ``.env`` first (compose does it before splitting)."""
        dotenv = self.env_files.get("envfile:.env")
        if dotenv and is_scalar(node) and "$" in node.value:
            sm = scalar_map(self.text, node)
            w, refs = _interpolate(Word(Value(sm.value, None), sm.omap), dotenv)
            vals = embedded.split_shell_words(w.text, w.omap)
            if vals is None:
                return None
            # The same split on offsets in the interpolated text: which words are one reference's whole value.
            at = embedded.split_shell_words(w.text, OffsetMap.contiguous(0, len(w.text))) or []
            return [Word(_from_env_file(v, (a.span.start, a.span.end) if a.span else (-1, -1), refs))
                    for v, a in zip(vals, at)] if len(at) == len(vals) else [Word(v) for v in vals]
        return self.words(node)

    def compose_word(self, w: Word) -> Word:
        """Compose interpolates ``${VAR}`` from the host (and the ``.env`` file beside the compose file) before
        the container starts: known when ``.env`` sets it, else unknown here."""
        t = w.text
        if t is None or "$" not in t:
            return w
        dotenv = self.env_files.get("envfile:.env", {})
        if dotenv:
            w, refs = _interpolate(w, dotenv)
            whole = _from_env_file(w.value, (0, len(w.text)), refs)  # ["--kv-cache-dtype", "${KV}"]
            if whole.path is not None:
                return Word(whole)
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
                    b.mapped("$", [None])  # two characters for one: not verbatim
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
                senv = env  # (a step that sets nothing shares its job's settings: copied, each step cost them all)
                if get(step, "env") is not None:
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
                if shell and shell not in SHELLS:
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
    def ray_job(self, root) -> None:
        """A Ray job spec (``ray job submit --submission-id ... -- ``; RayJob ``entrypoint:``): a shell command."""
        entry = get(root, "entrypoint")
        if not is_scalar(entry) or get(root, "services") is not None:
            return
        env = Env()
        read_env(self.text, get(get(root, "runtime_env"), "env_vars"), env)
        self.shell_scalar(entry, env=env, hints=env.hints("runtime_env env_vars:"), what="entrypoint:")

    def task(self, root) -> None:
        run, setup, commands = get(root, "run"), get(root, "setup"), get(root, "commands")
        if not (is_scalar(run) or is_scalar(setup) or is_seq(commands)):
            return
        env = Env()
        read_env(self.text, get(root, "envs"), env)
        read_env(self.text, get(root, "env"), env)
        hints = env.hints("envs:")
        image = get(root, "image")
        names: list[tuple[str, Span | None]] = []  # SkyPilot's accelerators, any of which the task may get
        gpus: list[tuple[str, Span | None]] = []  # dstack's resources.gpu
        for res in [get(root, "resources")] + _seq(get(get(root, "resources"), "any_of")) + \
                _seq(get(get(root, "resources"), "ordered")):
            if not is_map(res):
                continue
            img = get(res, "image_id")
            if is_scalar(img) and img.value.startswith("docker:"):
                sm = scalar_map(self.text, img)
                sub = sm.omap.span(Span(7, len(sm.value))) if sm.verbatim else None
                hints += image_hints(img.value[7:], sub or node_span(img))
            acc = get(res, "accelerators") if get(res, "accelerators") is not None else get(res, "gpus")  # SkyPilot
            if is_scalar(acc):
                names += [(acc.value, node_span(acc))]
            elif is_map(acc):
                names += [(k.value, node_span(k)) for k, _ in items(acc) if is_scalar(k)]
            elif is_seq(acc):
                names += [(a.value, node_span(a)) for a in acc.value if is_scalar(a)]
            gpus += dstack_gpu_names(get(res, "gpu"))
        hints += accelerator_hints(names) + accelerator_hints(gpus, how="resources.gpu")
        if is_scalar(image):
            hints += image_hints(image.value, scalar_map(self.text, image).verbatim or node_span(image))
        hints = dedupe_hints(hints)
        if is_scalar(setup):
            self.shell_scalar(setup, env=env, hints=hints, what="setup:")
        if is_scalar(run):
            self.shell_scalar(run, env=env, hints=hints, what="run:")
        if is_seq(commands):
            self.shell_lines(commands.value, env=env, hints=hints, what="commands:")

    # Kubernetes (Pod, Deployment, StatefulSet, Job, LeaderWorkerSet, RoleBasedGroup, ...) and Argo containers,
    # and every other map that runs a container the Kubernetes way, ``command`` + ``args``: OME's runners
    # (``engineConfig.runner``, ``decoderConfig``, ``routerConfig``, their ``leader``/``worker``), a Helm
    # chart's values, Tekton steps ...
    def walk_containers(self, root) -> None:
        """Every container, with the GPU the nearest ``nodeSelector``/``affinity`` around it asks for (a pod
        spec's, a runtime's, a Helm chart's values)."""
        stack: list[tuple[object, list[Hint]]] = [(root, [])]
        seen: set[int] = set()
        while stack:
            n, nodes = stack.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            if is_map(n):
                if get(n, "nodeSelector") is not None or get(n, "affinity") is not None:
                    nodes = pod_node_hints(n) or nodes
                for k, v in items(n):
                    key = scalar_text(k)
                    if key in ("containers", "initContainers", "ephemeralContainers") and is_seq(v):
                        for c in v.value:
                            if is_map(c):
                                self.container(c, nodes)
                    elif key == "container" and is_map(v) and get(v, "image") is not None:
                        self.container(v, nodes)
                    elif key == "predictor" and is_map(v) and is_map(get(v, "model")):
                        self.kserve_model(get(v, "model"), nodes)
                    stack.append((v, nodes))
                if get(n, "args") is None and self.profile(n):
                    continue
                if get(n, "command") is not None or get(n, "args") is not None:
                    self.container(n, nodes)
            elif is_seq(n):
                stack.extend((x, nodes) for x in n.value)

    def profile(self, m) -> bool:
        """A launch profile: the server's command as a list under one key and its arguments in lists beside it
        (``server_executable: [python3, -m, sglang.launch_server]``, ``base_args: [...]``); whether it is one."""
        pairs = [(scalar_text(k), v) for k, v in items(m)]
        for key, v in pairs:
            head = sequence_words(self.text, v) if key and is_seq(v) and not profile_arg_key(key) else None
            if not head:
                continue
            cmd = unwrap(head)
            if cmd is None or cmd.match is None:
                continue
            rest = []
            for k2, v2 in pairs:
                more = sequence_words(self.text, v2) if k2 and k2 != key and is_seq(v2) and profile_arg_key(k2) \
                    else None
                rest += more or []
            if not rest:
                return False
            env = Env()
            read_env(self.text, get(m, "env") or get(m, "environment"), env)
            self.launch_words(head + rest, env=env, hints=dedupe_hints(env.hints("env:")), what=key)
            return True
        return False

    def container(self, c, nodes: list[Hint] = ()) -> None:
        if id(c) in self.done:
            return
        self.done.add(id(c))
        env = Env()
        read_env(self.text, get(c, "env"), env)
        hints = env.hints("env:")
        image = get(c, "image")
        if is_scalar(image):
            hints += image_hints(image.value, scalar_map(self.text, image).verbatim or node_span(image))
        elif is_map(image) and is_scalar(get(image, "repository")):  # a Helm chart's image: repository + tag
            tag = get(image, "tag")
            ref = get(image, "repository").value + (f":{tag.value}" if is_scalar(tag) and tag.value else "")
            hints += image_hints(ref, node_span(image))
        res = get(c, "resources")
        if is_map(res):
            hints += resource_hints(self.text, res)
        hints = dedupe_hints(hints + list(nodes))
        command = self.words(get(c, "command"))
        args = self.words(get(c, "args"))
        if get(c, "command") is None and get(c, "args") is None and is_scalar(image):
            self.env_launch(image, env, c, hints)  # the image's own program, from its environment
        if command is None or args is None:
            return
        refs = sum(name in env.vars for w in command + args for name in _K8S_REF.findall(w.text or ""))
        words = [self.k8s_expand(w, env, shared=refs > 1) for w in command + args]
        opener = key_node(c, "command") or key_node(c, "args")
        if command:
            self.launch_words(words, env=env, hints=hints, what="command",
                              fallback=words[len(command):], opener=opener)
        elif args:
            self.launch_words(words, env=env, hints=hints, what="args", opener=opener)

    def kserve_model(self, m, nodes: list[Hint] = ()) -> None:
        """A KServe ``predictor.model`` served by an SGLang runtime (its ``runtime`` or ``modelFormat`` name says
        sglang): its ``args`` are appended to the runtime's ``python3 -m sglang.launch_server``, so they are
        server arguments.  A model with its own ``command`` is a container like any other."""
        if get(m, "command") is not None or not is_seq(get(m, "args")):
            return
        names = [scalar_text(get(m, "runtime")), scalar_text(get(get(m, "modelFormat"), "name"))]
        if not any(n and "sglang" in n.lower() for n in names):
            return
        args = get(m, "args")
        at = Span(args.start_mark.index, args.start_mark.index)
        entry = [Word(Value(t, None, Provenance.LITERAL, use=at)) for t in ("python3", "-m", "sglang.launch_server")]
        self.done.add(id(m))
        words = sequence_words(self.text, args)
        if words is None:
            return
        env = Env()
        read_env(self.text, get(m, "env"), env)
        hints = env.hints("env:")
        res = get(m, "resources")
        if is_map(res):
            hints += resource_hints(self.text, res)
        self.launch_words(entry + words, env=env, hints=dedupe_hints(hints + list(nodes)), what="predictor.model.args",
                          opener=key_node(m, "args"))

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
                b.mapped("$", [None])  # two characters for one: not verbatim
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


def _scalar_spans(docs: list) -> list[tuple[int, int]]:
    """Where the documents' scalars are: a line in one that starts with ``#`` is part of a value, not a comment."""
    out: list[tuple[int, int]] = []
    seen: set[int] = set()
    stack = list(docs)
    while stack:
        n = stack.pop()
        if id(n) in seen:  # an alias: its node is met again
            continue
        seen.add(id(n))
        if is_scalar(n):
            out.append((n.start_mark.index, n.end_mark.index))
        elif is_seq(n):
            stack.extend(n.value)
        elif is_map(n):
            for k, v in n.value:
                stack.extend((k, v))
    return out


def scan_yaml(text: str, path: str, *, env_files: dict[str, dict[str, ForeignString]] | None = None) -> ScanResult:
    """Launches in a YAML file (see the module docstring); a syntax error is a FileError, never raised.

    ``env_files`` gives the variables of the files compose reads (``env_file:``, ``.env``), keyed as
    ``ScanResult.sources`` names them (``envfile:NAME``); read by :mod:`kv4lint.pipeline.sourced` after the cache.
    """
    result = ScanResult()
    docs, errors = compose(text, path)
    result.errors.extend(errors)
    sc = _Yaml(text, path, result, env_files)
    for doc in docs:
        try:
            sc.document(doc)
        except RecursionError:
            result.errors.append(FileError(path, "YAML too deeply nested to scan", doc.start_mark.line + 1))
        except Exception as e:  # noqa: BLE001 - one document must not stop the others
            result.errors.append(internal_error.scan_error(path, "while scanning YAML", e, doc.start_mark.line + 1))
    embedded.mark_shared(result, text, sc.defs)
    embedded.apply_disabled(result, text, sc.index, comments=lambda: outside(_scalar_spans(docs)))
    result.launches.sort(key=lambda launch: (launch.span.start, launch.anchor.start))
    return result
