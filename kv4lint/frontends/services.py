"""Service and task files: systemd units, supervisord programs, Procfiles, justfiles, tox.ini, pyproject tasks.

Each format only says where its commands are written; the commands
themselves are read by the shell frontend (through
:func:`kv4lint.frontends.embedded.scan_shell_text`, so its one list of wrappers
applies), character by character mapped back to the file so that findings
point at the value and fixes edit it in place:

- systemd: ``ExecStart=`` (and ``ExecStartPre=`` ...), its ``-@:+!`` prefixes dropped,
  ``Environment=`` giving values and hints;
- supervisord: ``command=`` of a ``[program:...]`` section, its continuation lines, ``environment=``;
- Procfile: ``name: command``;
- justfile: the recipe lines under ``name:`` (``{{var}}`` is unknown);
- tox.ini: ``commands =`` of a ``[testenv...]`` section, one command a line (``{posargs}`` is unknown);
- pyproject.toml: ``[tool.poe.tasks]`` and ``[tool.pdm.scripts]`` strings, ``cmd``/``shell`` of their tables,
  and ``cmd`` arrays.
"""

from __future__ import annotations

import re

from kv4lint.base.model import Hint, Provenance, ScanResult, Span, Value
from kv4lint.base.source import LineIndex
from kv4lint.frontends import argv_lists, embedded
from kv4lint.frontends.argv_lists import Word
from kv4lint.frontends.embedded import TextBuilder
from kv4lint.frontends.hints import env_hints


def _lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line, without its line break."""
    out = []
    i = 0
    for m in re.finditer(r"\r?\n|\Z", text):
        out.append((i, m.start()))
        i = m.end()
        if m.end() == len(text):
            break
    return out


def _shell(result: ScanResult, text: str, path: str, b: TextBuilder, what: str, line: int,
           env: dict | None = None, hints: list[Hint] | None = None, opener: int | None = None,
           index: LineIndex | None = None) -> None:
    body, omap = b.build()
    if not body.strip():
        return
    sub = embedded.scan_shell_text(body, path, omap, env=env, hints=hints, what=what, line=line, file_text=text)
    for la in sub.launches:
        la.language = "shell"
    embedded.merge(result, sub, text=text, index=index or LineIndex(text), opener=opener)


_TEMPLATE = re.compile(r"\{\{.*?\}\}|\{posargs(?::[^}]*)?\}|\{env:[^}]*\}|\{[a-z_]+\}")


def _add(b: TextBuilder, text: str, s: int, e: int, template: bool = False) -> None:
    """The file's characters ``s``..``e``; ``template``: ``{{x}}``/``{posargs}`` become an unknown ``${___}``."""
    if not template:
        b.verbatim(text[s:e], s)
        return
    at = s
    for m in _TEMPLATE.finditer(text, s, e):
        b.verbatim(text[at:m.start()], at)
        b.synthetic("${" + "_" * max(1, m.end() - m.start() - 3) + "}", m.start())
        at = m.end()
    b.verbatim(text[at:e], at)


# ---------------------------------------------------------------------------
# INI-like: systemd units, supervisord, tox

_SECTION = re.compile(r"^\s*\[([^\]]+)\]\s*$")
_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*")


def _ini(text: str):
    """(section, key, [(value start, value end) per physical line], key line start) for each entry."""
    section = ""
    lines = _lines(text)
    k = 0
    while k < len(lines):
        s, e = lines[k]
        raw = text[s:e]
        m = _SECTION.match(raw)
        if m:
            section = m.group(1).strip()
            k += 1
            continue
        m = _KEY.match(raw)
        if not m or raw[:1] in " \t#;":
            k += 1
            continue
        parts = [(s + m.end(), e)]
        k += 1
        while k < len(lines):  # continuation: indented lines (supervisord, tox), or a trailing backslash
            s2, e2 = lines[k]
            line = text[s2:e2]
            cont_bs = text[parts[-1][0]:parts[-1][1]].endswith("\\")
            if (line[:1] in (" ", "\t") and line.strip() and not line.lstrip().startswith(("#", ";"))) or \
                    (cont_bs and line.strip()):
                parts.append((s2, e2))
                k += 1
                continue
            break
        yield section, m.group(1), parts, s


def scan_systemd(text: str, path: str) -> ScanResult:
    result = ScanResult()
    entries = list(_ini(text))
    env: dict[str, str] = {}
    hints: list[Hint] = []
    for section, key, parts, _at in entries:
        if section == "Service" and key == "Environment":
            value = " ".join(text[s:e] for s, e in parts)
            for m in re.finditer(r'"([A-Za-z_][A-Za-z0-9_]*)=([^"]*)"|([A-Za-z_][A-Za-z0-9_]*)=(\S*)', value):
                name, val = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
                env[name] = val
                hints.extend(env_hints(name, val, Span(parts[0][0], parts[-1][1]), how="Environment="))
    index = LineIndex(text)
    for section, key, parts, at in entries:
        if section != "Service" or not key.startswith("Exec"):
            continue
        b = TextBuilder()
        for k, (s, e) in enumerate(parts):
            if k == 0:
                while s < e and text[s] in "-@:+!":
                    s += 1
            b.verbatim(text[s:e], s)
            b.synthetic("\n", e)
        _shell(result, text, path, b, f"{key}=", index.position(at).line, env, hints, at, index)
    return result


def _supervisor_env(value: str) -> dict[str, str]:
    return {m.group(1): m.group(2) if m.group(2) is not None else m.group(3)
            for m in re.finditer(r'([A-Za-z_][A-Za-z0-9_]*)=(?:"([^"]*)"|([^,]*))', value)}


def scan_supervisord(text: str, path: str) -> ScanResult:
    result = ScanResult()
    index = LineIndex(text)
    entries = list(_ini(text))
    for section, key, parts, at in entries:
        if not section.startswith("program:") or key != "command":
            continue
        env: dict[str, str] = {}
        for sec2, key2, parts2, _ in entries:
            if sec2 == section and key2 == "environment":
                env = _supervisor_env(" ".join(text[s:e] for s, e in parts2))
        b = TextBuilder()
        for k, (s, e) in enumerate(parts):
            if k:
                b.synthetic(" ", s)
            b.verbatim(text[s:e], s)
        hints = [h for n, v in env.items() for h in env_hints(n, v, None, how="environment=")]
        _shell(result, text, path, b, f"[{section}] command=", index.position(at).line, env, hints, at, index)
    return result


def scan_tox(text: str, path: str) -> ScanResult:
    result = ScanResult()
    index = LineIndex(text)
    for section, key, parts, at in _ini(text):
        if not section.startswith("testenv") or key not in ("commands", "commands_pre", "commands_post"):
            continue
        for s, e in parts:  # one command a line (tox splits it, no shell: the words are the same)
            if text[s:e].strip():
                b = TextBuilder()
                _add(b, text, s, e, template=True)
                _shell(result, text, path, b, f"[{section}] {key}", index.position(s).line, opener=at, index=index)
    return result


# ---------------------------------------------------------------------------
# Procfile, justfile

def scan_procfile(text: str, path: str) -> ScanResult:
    result = ScanResult()
    index = LineIndex(text)
    for s, e in _lines(text):
        m = re.match(r"^([A-Za-z0-9_-]+):[ \t]*", text[s:e])
        if m:
            b = TextBuilder()
            b.verbatim(text[s + m.end():e], s + m.end())
            _shell(result, text, path, b, f"Procfile {m.group(1)}", index.position(s).line, opener=s, index=index)
    return result


_RECIPE = re.compile(r"^@?[A-Za-z_][A-Za-z0-9_-]*(?:\s+[^:]*)?:(?!=)")


def scan_justfile(text: str, path: str) -> ScanResult:
    result = ScanResult()
    index = LineIndex(text)
    lines = _lines(text)
    k = 0
    while k < len(lines):
        s, e = lines[k]
        if not _RECIPE.match(text[s:e]):
            k += 1
            continue
        b = TextBuilder()
        first = k + 1
        k += 1
        while k < len(lines) and (text[lines[k][0]:lines[k][1]][:1] in (" ", "\t") or
                                  not text[lines[k][0]:lines[k][1]].strip()):
            ls, le = lines[k]
            body = text[ls:le]
            indent = len(body) - len(body.lstrip(" \t"))
            ls += indent
            while ls < le and text[ls] in "@-":  # quiet / ignore-errors markers
                ls += 1
            _add(b, text, ls, le, template=True)
            b.synthetic("\n", le)
            k += 1
        if first < len(lines):
            _shell(result, text, path, b, "recipe", first + 1, opener=s, index=index)
    return result


# ---------------------------------------------------------------------------
# pyproject.toml task runners

_TASK_TABLES = ("tool.poe.tasks", "tool.pdm.scripts")
_TOML_HEADER = re.compile(r"^\s*\[([^\[\]]+)\]\s*(?:#.*)?$")
_TOML_KEY = re.compile(r'\s*(?:"([^"]+)"|([A-Za-z0-9_-]+))\s*=\s*')
_TOML_STR = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'')


def _toml_strings(text: str, s: int, e: int, keys: tuple[str, ...] | None):
    """String values in ``text[s:e]`` (a value, an inline table, an array): (key, start, end of the literal)."""
    if keys is None:
        m = _TOML_STR.match(text, s)
        if m and m.start() == s:
            yield None, m.start(), m.end()
            return
    for m in re.finditer(r'(?:^|[{,\s])(cmd|shell)\s*=\s*', text[s:e]):
        v = s + m.end()
        if text[v:v + 1] == "[":
            yield "cmd[]", v, text.find("]", v) + 1
        else:
            sm = _TOML_STR.match(text, v)
            if sm:
                yield m.group(1), sm.start(), sm.end()


def _literal_builder(text: str, s: int, e: int) -> TextBuilder | None:
    """The characters of a TOML string literal ``text[s:e]``, mapped to the file; None when escaped."""
    b = TextBuilder()
    if text[s] == "'":
        b.verbatim(text[s + 1:e - 1], s + 1)
        return b
    try:
        value, outer, _end = embedded.json_string_at(text, s, toml=True)
    except embedded.JSONStringError:
        return None
    b.mapped(value, outer)
    return b


def scan_pyproject(text: str, path: str) -> ScanResult:
    result = ScanResult()
    if "tool.poe" not in text and "tool.pdm" not in text:
        return result
    index = LineIndex(text)
    table = ""
    for s, e in _lines(text):
        line = text[s:e]
        m = _TOML_HEADER.match(line)
        if m:
            table = m.group(1).strip()
            continue
        under = next((t for t in _TASK_TABLES if table == t or table.startswith(t + ".")), None)
        if under is None:
            continue
        km = _TOML_KEY.match(line)
        if not km:
            continue
        key = km.group(1) or km.group(2)
        v = s + km.end()
        if table == under:  # name = "cmd" | name = {cmd = "..."}
            found = list(_toml_strings(text, v, e, None)) or list(_toml_strings(text, v, e, ("cmd", "shell")))
        elif key in ("cmd", "shell"):
            found = [("cmd[]" if text[v:v + 1] == "[" else key, v, text.find("]", v) + 1 if text[v:v + 1] == "["
                      else (_TOML_STR.match(text, v).end() if _TOML_STR.match(text, v) else v))]
        else:
            continue
        for kind, a, z in found:
            if z <= a:
                continue
            if kind == "cmd[]":
                _argv(result, text, path, a, z, f"[{table}] {key}")
                continue
            b = _literal_builder(text, a, z)
            if b is not None:
                _shell(result, text, path, b, f"[{table}] {key}", index.position(s).line, opener=s, index=index)
    return result


def _argv(result: ScanResult, text: str, path: str, a: int, z: int, what: str) -> None:
    """``cmd = ["python", "-m", ...]``: an argv, no shell; each element edited in place."""
    lits = list(_TOML_STR.finditer(text, a, z))
    removes = argv_lists.removal_spans([(m.start(), m.end()) for m in lits])
    words = []
    for m, rm in zip(lits, removes):
        part = _literal_builder(text, m.start(), m.end())
        if part is None:
            return
        value, omap = part.build()
        verbatim = m.end() - m.start() - 2 == len(value)
        span = Span(m.start() + 1, m.end() - 1) if verbatim and value else None
        v = Value(value, span, Provenance.LITERAL, use=None if span else Span(m.start(), m.end()), remove=rm,
                  quote=text[m.start()])
        words.append(Word(v, omap))
    sub = argv_lists.launches_from_words(words, path, language="toml", what=what, file_text=text)
    embedded.merge(result, sub, text=text, opener=a)
