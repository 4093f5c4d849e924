"""JSON files: ``docker inspect`` output, VS Code ``launch.json``, devcontainers, ECS task definitions, Kubernetes.

The text is read by a small parser that keeps every string's characters at
their offsets (JSON with comments and trailing commas, as VS Code writes it,
is accepted).  Launches are recognised by their shape, whatever the file is
called:

- a ``module`` + ``args`` pair (a VS Code debug configuration): ``python -m MODULE ARGS``;
- command arrays or strings: ``Entrypoint`` + ``Cmd`` (``docker inspect``'s ``Config``),
  ``Path`` + ``Args`` (its process), ``entryPoint`` + ``command`` (ECS),
  ``command`` + ``args``; a string is a shell command;
- devcontainer lifecycle commands (``postStartCommand`` ...): a string, an array or an object of them;
- the environment beside them (``environment`` name/value lists, ``Env`` ``K=V`` lists, ``env`` objects)
  gives values and target hints;
- a Kubernetes manifest (``apiVersion`` + ``kind``) is read by the YAML frontend, JSON being YAML.

- a task's shell string under ``shell``/``cmd``/``script``/``run``;
- JSON Lines (``.jsonl``, ``.ndjson``, or a ``.json`` file that is not one value but one per line): each line's
  value is a document of its own, offsets kept in the whole text.

A ``// kv4lint: disable-file=CODES`` comment (JSON with comments) disables codes for the file; a
``// kv4lint: disable=CODES`` at the end of a finding's line is read by the runner, as in every format.

A key written twice counts by its last value, the one a JSON parser keeps (:meth:`Node.get`, :meth:`Node.members`).
Each launch carries the JSON path of its command (``$.configurations[0].args``), which findings name.
A verbatim string element is edited in place, quotes and layout untouched.
"""

from __future__ import annotations

import gc
import re
from dataclasses import dataclass

from kv4lint.base.file_error import FileError
from kv4lint.base.model import Hint, Provenance, ScanResult, Span, Value
from kv4lint.base.source import LineIndex, OffsetMap
from kv4lint.base.suppression import file_codes
from kv4lint.frontends import argv_lists, budget, embedded, nested
from kv4lint.frontends.argv_lists import Word
from kv4lint.frontends.env_launchers import Setting, env_launch
from kv4lint.frontends.hints import dedupe_hints, env_hints, image_hints, node_hints, scheduler_hints, short
from kv4lint.sglang.commands import unwrap
from kv4lint.sglang.launchers import profile_arg_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

_MAX_DEPTH = 200


class JSONError(ValueError):
    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


@dataclass(slots=True)  # a JSON file holds a node for every value: ~100 bytes less each
class Node:
    """A JSON value with where it is written: ``kind`` is obj, arr, str, num or lit."""

    kind: str
    start: int
    end: int
    value: object = None  # str for str; list of Node for arr; list of (key, key Node, Node) for obj
    outer: Sequence[int | None] = ()  # str: file offset of each character (None: an escape), then the closing quote

    def get(self, key: str) -> "Node | None":
        """The value of ``key``: the last one written, the one a JSON parser keeps."""
        if self.kind != "obj":
            return None
        for k, _kn, v in reversed(self.value):
            if k == key:
                return v
        return None

    def members(self) -> list:
        """The object's (key, key node, value) entries a JSON parser keeps: of a duplicated key, the last."""
        last = {k: n for n, (k, _kn, _v) in enumerate(self.value)}
        return [e for n, e in enumerate(self.value) if last[e[0]] == n]


_SPACE = re.compile(r"(?:[ \t\r\n\ufeff]+|//[^\n]*|/\*.*?\*/)*", re.S)
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


class _Parser:
    def __init__(self, text: str):
        self.text = text

    def skip(self, i: int) -> int:
        return _SPACE.match(self.text, i).end()

    def value(self, i: int, depth: int) -> tuple[Node, int]:
        if depth > _MAX_DEPTH:
            raise JSONError("JSON nested too deeply to read", i)
        text = self.text
        i = self.skip(i)
        if i >= len(text):
            raise JSONError("unexpected end of JSON", i)
        c = text[i]
        if c == '"':
            try:
                s, outer, end = embedded.json_string_at(text, i)
            except embedded.JSONStringError as e:
                raise JSONError(f"bad JSON string ({e})", i) from None
            return Node("str", i, end, s, outer), end
        if c == "{":
            return self.container(i, depth, "obj", "}")
        if c == "[":
            return self.container(i, depth, "arr", "]")
        for lit in ("true", "false", "null"):
            if text.startswith(lit, i):
                return Node("lit", i, i + len(lit), lit), i + len(lit)
        m = _NUMBER.match(text, i)
        if m and m.end() > i:
            return Node("num", i, m.end(), m.group()), m.end()
        raise JSONError(f"unexpected {c!r} in JSON", i)

    def container(self, i: int, depth: int, kind: str, close: str) -> tuple[Node, int]:
        text = self.text
        out: list = []
        start = i
        i += 1
        while True:
            i = self.skip(i)
            if i < len(text) and text[i] == close:  # also after a trailing comma (JSON with comments)
                return Node(kind, start, i + 1, out), i + 1
            if kind == "obj":
                key, i = self.value(i, depth + 1)
                if key.kind != "str":
                    raise JSONError("an object key must be a string", key.start)
                i = self.skip(i)
                if i >= len(text) or text[i] != ":":
                    raise JSONError("expected ':' after an object key", i)
                val, i = self.value(i + 1, depth + 1)
                out.append((key.value, key, val))
            else:
                val, i = self.value(i, depth + 1)
                out.append(val)
            i = self.skip(i)
            if i < len(text) and text[i] == ",":
                i += 1
                continue
            if i < len(text) and text[i] == close:
                continue
            raise JSONError(f"expected ',' or {close!r}", i)


_AFTER_VALUE = "unexpected text after the JSON value"

# One token after the blanks and comments before it (as _SPACE): a string, a bracket, a number (as _NUMBER) or a
# literal (group 1), then the blanks after it and the comma or colon that follows it, if one does (group 2): a
# key and its colon, or a value and its comma, are one match.
_TOKEN = re.compile(r"(?:[ \t\r\n\ufeff]+|//[^\n]*|/\*.*?\*/)*"
                    r"""("(?:[^"\\\n]|\\.)*"|[{}[\]]|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"""
                    r"|true|false|null)(?:[ \t\r\n\ufeff]+|//[^\n]*|/\*.*?\*/)*([,:])?", re.S)
_VALUE, _KEY, _CLOSE = range(3)  # what the token reader takes next (besides a closing bracket, where allowed)


class _Slow(Exception):
    """Text the token reader leaves to :class:`_Parser`: a syntax error (whose words and offset are the
    reference reader's), a bad escape, or nesting near the depth bound."""


def _value(text: str, i: int) -> tuple[Node, int]:
    """The JSON value after offset ``i`` (blanks and comments skipped) and the offset after it: the same nodes as
    :meth:`_Parser.value`, read with one expression per value (:data:`_TOKEN`) and a stack instead of calls per
    value, blank and separator.  Raises :class:`_Slow` for anything but well-formed JSON (with comments and
    trailing commas), which :class:`_Parser` then reads."""
    match = _TOKEN.match
    stack: list[list] = []  # the open containers: [bracket, start, items, key node]
    want, close_ok = _VALUE, False
    while True:
        m = match(text, i)
        if m is None:
            raise _Slow
        j, e = m.span(1)
        i = m.end()
        sep = text[i - 1] if m.lastindex == 2 else ""
        c = text[j]
        if c == '"':
            if want == _CLOSE:
                raise _Slow
            raw = text[j:e]
            if "\\" in raw:
                try:
                    s, outer, _end = embedded.json_string_at(text, j)
                except embedded.JSONStringError:
                    raise _Slow from None
                node = Node("str", j, e, s, outer)
            else:  # every character verbatim: its offsets are a range (embedded.json_string_at)
                node = Node("str", j, e, raw[1:-1], range(j + 1, e))
            if want == _KEY:
                if sep != ":":
                    raise _Slow
                stack[-1][3] = node
                want, close_ok = _VALUE, False
                continue
        elif c == "}" or c == "]":
            if not close_ok or stack[-1][0] != ("{" if c == "}" else "["):
                raise _Slow
            bracket, start, items, _key = stack.pop()
            node = Node("obj" if bracket == "{" else "arr", start, e, items)
        elif want != _VALUE:
            raise _Slow  # an object key must be a string; a value needs a comma before it
        elif c == "{" or c == "[":
            if sep or len(stack) >= _MAX_DEPTH:
                raise _Slow  # "[," ; _Parser knows the depth bound's offset
            stack.append([c, j, [], None])
            want, close_ok = (_KEY if c == "{" else _VALUE), True
            continue
        elif c == "t" or c == "f" or c == "n":
            node = Node("lit", j, e, text[j:e])
        else:
            node = Node("num", j, e, text[j:e])
        if not stack:
            return node, e
        top = stack[-1]
        if top[0] == "{":
            top[2].append((top[3].value, top[3], node))
        else:
            top[2].append(node)
        if sep == ",":
            want, close_ok = (_KEY if top[0] == "{" else _VALUE), True
        elif sep:
            raise _Slow  # a colon after a value
        else:
            want, close_ok = _CLOSE, True


def _read(p: _Parser, i: int) -> tuple[Node, int]:
    """One value at ``i``: by the token reader, or by the reference reader where it gives up (the same nodes, and
    the reference's error for text that is not JSON).

    The cyclic garbage collector waits meanwhile: a tree of nodes holds no cycle, and its passes over the growing
    tree cost more than reading it (10 MB of data: 4.4 s with them, 2.0 s without)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        try:
            return _value(p.text, i)
        except _Slow:
            return p.value(i, 0)
    finally:
        if collecting:
            gc.enable()


def parse(text: str) -> Node:
    p = _Parser(text)
    node, i = _read(p, 0)
    i = p.skip(i)
    if i != len(text):
        raise JSONError(_AFTER_VALUE, i)
    return node


def iter_lines(text: str) -> Iterator[Node]:
    """JSON Lines (``.jsonl``, ``.ndjson``): one JSON value per line, blank lines allowed; each value keeps
    its offsets in the whole text, so findings and fixes land on its line.  One value at a time: a file of
    many lines is scanned value by value, never held whole as nodes."""
    p = _Parser(text)
    i = p.skip(0)
    while i < len(text):
        node, end = _read(p, i)
        yield node
        i = p.skip(end)
        if i < len(text) and "\n" not in text[end:i]:
            raise JSONError("expected one JSON value per line", i)


def parse_lines(text: str) -> list[Node]:
    return list(iter_lines(text))


# ---------------------------------------------------------------------------
# Words


def _word(n: Node, remove: Span | None = None) -> Word:
    text = n.value
    outer = n.outer
    contiguous = n.end - n.start - 2 == len(text)  # no escapes: the characters are the value
    span = Span(n.start + 1, n.end - 1) if contiguous and text else None
    v = Value(text, span, Provenance.LITERAL, use=None if span else Span(n.start, n.end), remove=remove, quote='"')
    return Word(v, OffsetMap(list(outer)))


def _synth(text: str, at: Node) -> Word:
    return Word(Value(text, None, Provenance.LITERAL, use=Span(at.start, at.end)))


def words_of(n: Node | None) -> list[Word] | None:
    """An argv given as an array of strings, or as a string (a shell command: ``sh -c``); None: not a command."""
    if n is None or (n.kind == "lit" and n.value == "null"):
        return []
    if n.kind == "arr":
        if not all(x.kind == "str" for x in n.value):
            return None
        removes = argv_lists.removal_spans([(x.start, x.end) for x in n.value])
        return [_word(x, r) for x, r in zip(n.value, removes)]
    if n.kind == "str":
        return [_synth("/bin/sh", n), _synth("-c", n), _word(n)]
    return None


# ---------------------------------------------------------------------------
# The scanner

_PAIRS = (("Entrypoint", "Cmd"), ("entryPoint", "command"), ("command", "args"), ("Path", "Args"),
          ("dockerEntrypoint", "dockerStartCmd"))  # the last: a RunPod pod (REST API's PodCreateInput)
_DEVCONTAINER = ("initializeCommand", "onCreateCommand", "updateContentCommand", "postCreateCommand",
                 "postStartCommand", "postAttachCommand")
_IMAGE_KEYS = ("Image", "image", "imageName")
# The GPUs a RunPod pod may get (https://docs.runpod.io/api-reference/pods/POST/pods: ``gpuTypeIds``, any of them;
# a serverless endpoint's ``gpuIds``: pools such as ``ADA_24,HOPPER_141``).
_RUNPOD_GPU_KEYS = ("gpuTypeIds", "gpuTypeId", "gpuIds")
# A shell command string under one of these keys (a task file's ``"shell": "python3 -m sglang.launch_server ..."``)
_SHELL_KEYS = ("shell", "cmd", "script", "run", "bash")
_LINES_SUFFIXES = (".jsonl", ".ndjson")


def _path(parts: list) -> str:
    out = "$"
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += f".{p}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p) else f"[{p!r}]"
    return out


class _Json:
    def __init__(self, text: str, path: str, result: ScanResult):
        self.text = text
        self.path = path
        self.result = result

    def env(self, obj: Node, inherited: dict) -> tuple[dict, list[Hint]]:
        env = dict(inherited)
        hints: list[Hint] = []

        def add(name: str, value: Node | None, how: str, span: Span) -> None:
            text = value.value if value is not None and value.kind == "str" else None
            env[name] = text
            hints.extend(env_hints(name, text, span, how=how))

        for key in ("environment", "Env", "env"):
            e = obj.get(key)
            if e is None:
                continue
            if e.kind == "obj":
                for k, kn, v in e.members():
                    add(k, v, key, Span(kn.start, v.end))
            elif e.kind == "arr":
                for item in e.value:
                    if item.kind == "str" and "=" in item.value:
                        name, _, val = item.value.partition("=")
                        env[name] = val
                        hints.extend(env_hints(name, val, Span(item.start, item.end), how=key))
                    elif item.kind == "obj" and item.get("name") is not None and item.get("name").kind == "str":
                        add(item.get("name").value, item.get("value"), key, Span(item.start, item.end))
        for key in _IMAGE_KEYS:
            img = obj.get(key)
            if img is not None and img.kind == "str":
                hints.extend(image_hints(img.value, Span(img.start, img.end)))
        for key in _RUNPOD_GPU_KEYS:
            gpu = obj.get(key)
            values = [gpu] if gpu is not None and gpu.kind == "str" else gpu.value if gpu is not None and \
                gpu.kind == "arr" else []
            names = [n.strip() for v in values if v.kind == "str" for n in v.value.split(",") if n.strip()]
            if names:
                hints.extend(scheduler_hints(names, short(f"RunPod {key}: {', '.join(names)}", 80),
                                             Span(gpu.start, gpu.end)))
        return env, hints

    def walk(self, node: Node, parts: list, env: dict, hints: list[Hint], depth: int = 0) -> None:
        if depth > _MAX_DEPTH or budget.spent():
            return
        if node.kind == "arr":
            for k, item in enumerate(node.value):
                self.walk(item, parts + [k], env, hints, depth + 1)
            return
        if node.kind != "obj":
            return
        env, own = self.env(node, env)
        if node.get("nodeSelector") is not None or node.get("affinity") is not None:  # a pod spec's GPU
            own = own + _node_hints(node)
        hints = dedupe_hints(own + hints)
        self.commands(node, parts, env, hints)
        for k, _kn, v in node.members():
            self.walk(v, parts + [k], env, hints, depth + 1)

    def commands(self, obj: Node, parts: list, env: dict, hints: list[Hint]) -> None:
        module = obj.get("module")
        if module is not None and module.kind == "str":
            args = obj.get("args")
            if args is not None and args.kind == "str":
                vals = embedded.split_shell_words(args.value, OffsetMap(list(args.outer)))
                rest = [Word(v) for v in vals] if vals is not None else None
            else:
                rest = words_of(args)
            if rest is not None:
                words = [_synth("python", module), _synth("-m", module), _word(module)] + rest
                self.launch(words, parts + ["args" if args is not None else "module"], env, hints)
        inspected = obj.get("Config") is not None and obj.get("Config").kind == "obj"
        for entry_key, cmd_key in _PAIRS:
            if inspected and entry_key == "Path":
                continue  # docker inspect: the process is the Config's Entrypoint + Cmd, read there
            entry, cmd = obj.get(entry_key), obj.get(cmd_key)
            if entry is None and cmd is None:
                continue
            ew, cw = words_of(entry), words_of(cmd)
            if ew is None or cw is None or not ew + cw:
                continue
            if entry_key == "command" and entry is not None and entry.kind == "str":
                continue  # command: "..." with args: a Kubernetes-like shape with a string command is no argv
            self.launch(ew + cw, parts + [cmd_key if cmd is not None else entry_key], env, hints)
            break
        for key in _DEVCONTAINER:
            c = obj.get(key)
            if c is None:
                continue
            cmds = [(k, v) for k, _kn, v in c.members()] if c.kind == "obj" else [(None, c)]
            for name, v in cmds:
                words = words_of(v)
                if words:
                    self.launch(words, parts + [key] + ([name] if name is not None else []), env, hints)

        for key in _SHELL_KEYS:
            c = obj.get(key)
            if c is not None and c.kind == "str":
                self.launch(words_of(c), parts + [key], env, hints)
        self.launcher(obj, parts, hints)
        if not any(obj.get(a) is not None and obj.get(b) is not None for a, b in _PAIRS):
            self.profile(obj, parts, env, hints)

    def profile(self, obj: Node, parts: list, env: dict, hints: list[Hint]) -> None:
        """A launch profile: the server's command as a list under one key and its arguments in lists beside it
        (``{"server_executable": ["python3", "-m", "sglang.launch_server"], "base_args": [...]}``)."""
        members = obj.members()
        for key, _kn, v in members:
            head = words_of(v) if v.kind == "arr" else None
            if not head or profile_arg_key(key):
                continue
            cmd = unwrap(head)
            if cmd is None or cmd.match is None:
                continue
            rest = []
            for k2, _kn2, v2 in members:
                more = words_of(v2) if k2 != key and v2.kind == "arr" and profile_arg_key(k2) else None
                rest += more or []
            if rest:
                self.launch(head + rest, parts + [key], env, hints)
            return

    def launcher(self, obj: Node, parts: list, hints: list[Hint]) -> None:
        """A container or deployment template of a launcher image that builds SGLang's command from its environment
        (RunPod's worker-sglang: ``"imageName"`` with ``"env": [{"key": ..., "value": ...}]``), with no command of
        its own: the launch its variables select."""
        image = next((obj.get(k) for k in (*_IMAGE_KEYS, "imageName") if obj.get(k) is not None), None)
        if image is None or image.kind != "str" or any(obj.get(k) is not None for pair in _PAIRS for k in pair):
            return
        settings = []
        for key in ("environment", "Env", "env"):
            e = obj.get(key)
            entries = [(k, kn, v) for k, kn, v in e.members()] if e is not None and e.kind == "obj" else []
            for item in e.value if e is not None and e.kind == "arr" else []:
                if item.kind == "obj":
                    name = item.get("name") or item.get("key")
                    if name is not None and name.kind == "str":
                        entries.append((name.value, item, item.get("value")))
            for name, at, v in entries:
                text = v.value if v is not None and v.kind == "str" else None
                span = Span(v.start + 1, v.end - 1) if text and v.end - v.start - 2 == len(text) else None
                settings.append(Setting(name, text, span, Span(at.start, (v or at).end)))
        launch = env_launch(image.value, settings, path=self.path, span=Span(obj.start, obj.end),
                            anchor=Span(image.start, image.end), language="json", hints=hints,
                            location=_path(parts))
        if launch is not None:
            self.result.launches.append(launch)

    def launch(self, words: list[Word], parts: list, env: dict, hints: list[Hint]) -> None:
        known = {k: v for k, v in env.items() if v is not None}
        sub = argv_lists.launches_from_words(words, self.path, env=known, hints=hints, language="json",
                                             what=f"the command at {_path(parts)}", file_text=self.text)
        where = _path(parts)
        for la in sub.launches:
            la.location = la.location or where
        embedded.merge(self.result, sub)


def _node_hints(pod: Node) -> list[Hint]:
    """A Kubernetes pod spec's ``nodeSelector`` and required node affinity (:func:`~kv4lint.frontends.hints.
    node_hints`)."""
    def obj(n: Node | None, key: str) -> Node | None:
        return n.get(key) if n is not None and n.kind == "obj" else None

    def arr(n: Node | None) -> list[Node]:
        return list(n.value) if n is not None and n.kind == "arr" else []

    sel = obj(pod, "nodeSelector")
    members = sel.members() if sel is not None and sel.kind == "obj" else []
    selector = [(k, v.value, Span(kn.start, v.end)) for k, kn, v in members if v.kind in ("str", "num")]
    required = obj(obj(obj(pod, "affinity"), "nodeAffinity"), "requiredDuringSchedulingIgnoredDuringExecution")
    terms = [[(str(obj(e, "key").value) if obj(e, "key") is not None else "",
               str(obj(e, "operator").value) if obj(e, "operator") is not None else "",
               [str(x.value) for x in arr(obj(e, "values")) if x.kind in ("str", "num")], Span(e.start, e.end))
              for e in arr(obj(t, "matchExpressions"))] for t in arr(obj(required, "nodeSelectorTerms"))]
    return node_hints(selector, terms)


def _is_kubernetes(root: Node) -> bool:
    docs = root.value if root.kind == "arr" else [root]
    for d in docs:
        if d.kind == "obj" and d.get("apiVersion") is not None and d.get("kind") is not None:
            return True
        items = d.get("items") if d.kind == "obj" else None
        if items is not None and items.kind == "arr" and any(_is_kubernetes(x) for x in items.value):
            return True
    return False


def path_at(root: Node, offset: int) -> str:
    """The JSON path of the deepest value written at ``offset``."""
    parts: list = []
    node = root
    while True:
        if node.kind == "obj":
            nxt = next(((k, v) for k, kn, v in node.value if kn.start <= offset < v.end), None)
        elif node.kind == "arr":
            nxt = next(((k, v) for k, v in enumerate(node.value) if v.start <= offset < v.end), None)
        else:
            nxt = None
        if nxt is None:
            return _path(parts)
        parts.append(nxt[0])
        node = nxt[1]


def _error(result: ScanResult, text: str, path: str, e: JSONError, what: str = "JSON") -> ScanResult:
    line = LineIndex(text).position(min(e.offset, len(text))).line
    result.errors.append(FileError(path, f"cannot parse {what}: {e} (line {line})", line))
    return result


def scan_json(text: str, path: str) -> ScanResult:
    result = ScanResult()
    try:
        if path.lower().endswith(_LINES_SUFFIXES):
            try:
                return _scan_lines(iter_lines(text), text, path, result)
            except JSONError as e:  # a file that does not parse is its error alone, as a JSON file is
                return _error(ScanResult(), text, path, e, "JSON Lines")
        try:
            root = parse(text)
        except JSONError as e:
            if str(e) != _AFTER_VALUE:
                raise
            try:  # a .json file holding JSON Lines: one value per line
                parse_lines(text)
            except JSONError:
                raise e from None
            return _scan_lines(iter_lines(text), text, path, result)
    except JSONError as e:
        return _error(result, text, path, e)
    except RecursionError:
        result.errors.append(FileError(path, "JSON too deeply nested to read"))
        return result
    if _is_kubernetes(root):
        try:
            sub = nested("yaml")(text, path)  # JSON is YAML: the YAML frontend reads manifests
        except ImportError as e:
            result.errors.append(FileError(path, f"cannot read a Kubernetes manifest: {e}"))
            return result
        for la in sub.launches:
            la.language = "json"
            la.location = re.sub(r"\[\d+\]$", "", path_at(root, la.anchor.start))  # the command, not its word
        result.launches.extend(sub.launches)
        result.errors.extend(sub.errors)
        return result
    _Json(text, path, result).walk(root, [], {}, [])
    result.disabled = file_codes(text)  # ``// kv4lint: disable-file=KV401`` in JSON with comments
    for la in result.launches:
        if la.location is None or la.location == "$":
            la.location = path_at(root, la.anchor.start)
    return result


def _scan_lines(values: Iterable[Node], text: str, path: str, result: ScanResult) -> ScanResult:
    """Each value of a JSON Lines file is a document of its own; a finding names the path inside its line.
    Once the file's launches pass their bound (:mod:`kv4lint.frontends.budget`), the rest is not read."""
    for root in values:
        if budget.spent():
            break
        sub = ScanResult()
        _Json(text, path, sub).walk(root, [], {}, [])
        for la in sub.launches:
            if la.location is None or la.location == "$":
                la.location = path_at(root, la.anchor.start)
        embedded.merge(result, sub)
    return result
