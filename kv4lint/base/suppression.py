"""Suppression comments: the one grammar, read by every reader and written by ``--add-suppressions``.

Forms (README, docs/configuration.md, docs/rules/*):

* ``# kv4lint: disable=KV401`` -- at the end of the line a finding is on, or
  on a comment line right above the command (a run of comment lines counts);
  several codes are separated by commas; ``# kv4lint: disable`` (no codes)
  disables every code.  A code is a prefix: ``KV4`` covers ``KV401``.
* ``# kv4lint: disable-file=KV401`` (or bare ``disable-file``) on a comment
  line anywhere in the file.
* ``# noqa: KV401`` (flake8's form; bare ``# noqa`` for every code) on the
  line of a finding in Python.
* ``# flake8: noqa`` (flake8's file-level form) on a line of a Python file:
  the file is skipped, read exactly as flake8 reads it (:func:`flake8_skips_file`),
  so that ``kv4lint check`` and the flake8 plugin agree.
* Whitespace is free around ``:``, ``=`` and ``,``; codes are read in any
  case.  Besides ``#``, the comment may start with ``<!--`` (Markdown, HTML),
  ``//`` or ``..`` (reStructuredText).

Which comment a file takes (what ``--add-suppressions`` writes) is
:func:`leader_for`: ``#`` for every format kv4lint reads but JSON; ``//`` for
JSON with comments (``.jsonc``, VS Code's ``launch.json``/``settings.json``/
``tasks.json``, devcontainers, ``tsconfig.json``: :func:`json_takes_comments`);
none for strict JSON (an ECS task definition, ``docker inspect`` output), whose
readers refuse any comment: there a finding can only be ignored through the
configuration (``per-file-ignores``).

This module is a leaf: it reads and writes text only and imports nothing of
kv4lint's.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Callable, Iterable

__all__ = ["ALL", "Directive", "codes_above", "covers", "disable_comment", "file_codes", "find_disable",
           "find_noqa", "flake8_skips_file", "json_takes_comments", "leader_for", "leading_directive", "missing",
           "names_kv4lint", "noqa_comment", "trailing_codes"]

ALL = "ALL"
LEADERS = ("#", "<!--", "//", "..")

_CODE = r"[A-Za-z0-9_]+"
_DISABLE = re.compile(r"(?P<leader>#|<!--|//|\.\.)\s*kv4lint\s*:\s*disable(?P<file>-file)?"
                      rf"(?:\s*=\s*(?P<codes>{_CODE}(?:\s*,\s*{_CODE})*))?(?![\w-])", re.I)
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.I)
# What every directive holds, as _DISABLE reads it (case-insensitive): a text without it has none.  Found from its
# "4", which no case changes (sre's fast search for a literal), the letters around it checked only there: 1 ms over
# a 2 MB script, where ``(?i)kv4lint`` (no literal to search for) costs 16 ms.
_NAMED = re.compile(r"4(?i:lint)(?<=(?i:kv4lint))")
# And every file-level one (``disable(?P<file>-file)``), found from its "-" so: 1.7 ms over a 2 MB script that names
# kv4lint, where reading its 60,000 lines one by one (below) cost 15 ms.
_FILE_WORD = re.compile(r"-(?i:file)(?<=(?i:disable-file))")

# After a trailing directive: nothing but the end of a comment (``-->``) and spaces.
_TAIL = re.compile(r"\s*(?:-->)?\s*\Z")


def names_kv4lint(text: str) -> bool:
    """Whether ``text`` may hold a ``kv4lint:`` directive at all (else it has none to read)."""
    return _NAMED.search(text) is not None


@dataclass(frozen=True)
class Directive:
    """One suppression comment found in a line.

    ``codes``: the codes it names, upper case (``{"ALL"}`` when it names none);
    ``start``/``end``: where the comment's directive is in the line;
    ``codes_end``: where its list of codes ends (-1 when it has none), the place
    to add codes.
    """

    kind: str  # "disable", "disable-file" or "noqa"
    codes: frozenset[str]
    start: int
    end: int
    codes_end: int


def _split(codes: str | None) -> frozenset[str]:
    out = frozenset(c.strip().upper() for c in re.split(r"[,\s]+", codes or "") if c.strip())
    return frozenset({ALL}) if not out or ALL in out else out


def _directive(m: re.Match, kind: str) -> Directive:
    return Directive(kind, _split(m.group("codes")), m.start(), m.end(), m.end("codes"))


def find_disable(line: str) -> Directive | None:
    """The first ``kv4lint: disable`` or ``disable-file`` comment in ``line``."""
    m = _DISABLE.search(line)
    if m is None:
        return None
    return _directive(m, "disable-file" if m.group("file") else "disable")


def find_noqa(line: str) -> Directive | None:
    """A ``# noqa[: CODES]`` comment in ``line``."""
    m = _NOQA.search(line)
    return _directive(m, "noqa") if m else None


def leading_directive(line: str) -> Directive | None:
    """The directive of a comment line (one that starts with a comment leader), else None."""
    t = line.lstrip()
    if not t.startswith(LEADERS):
        return None
    d = find_disable(t)
    if d is None or t[:d.start].strip():
        return None
    return d


@functools.lru_cache(maxsize=256)  # one line holds every finding of a long launch
def trailing_codes(line: str) -> frozenset[str]:
    """The codes of a ``# kv4lint: disable[=CODES]`` that ends ``line`` (a line-level suppression)."""
    for m in _DISABLE.finditer(line):
        if not m.group("file") and _TAIL.match(line, m.end()):
            return _split(m.group("codes"))
    return frozenset()


def codes_above(line_text: Callable[[int], str], line: int) -> frozenset[str]:
    """Codes disabled by the comment lines right above line ``line`` (1-based) of a text."""
    out: set[str] = set()
    k = line - 1
    while k >= 1:
        t = line_text(k).strip()
        if not t.startswith(LEADERS):
            break
        d = leading_directive(t)
        if d is not None and d.kind == "disable":
            out |= d.codes
        k -= 1
    return frozenset(out)


def file_codes(text: str, comments: Callable[[], Callable[[int], bool]] | None = None) -> frozenset[str]:
    """Codes disabled for the whole file by ``kv4lint: disable-file`` comments.

    Suppressions are comments: ``comments`` (called once, only when a line looks like a directive) gives the
    reader's test of whether the character at an offset of ``text`` starts a comment of its language, so
    that a line of a string literal, a here-document or a YAML value that looks like one is not one.
    Without it every line that starts with a comment leader counts.
    """
    if _FILE_WORD.search(text) is None:  # (most texts have none: their lines are not read one by one)
        return frozenset()
    out: set[str] = set()
    is_comment: Callable[[int], bool] | None = None
    pos = 0
    for line in text.splitlines(keepends=True):
        d = leading_directive(line)
        if d is not None and d.kind == "disable-file":
            if comments is not None:
                is_comment = is_comment or comments()
                if not is_comment(pos + len(line) - len(line.lstrip())):
                    pos += len(line)
                    continue
            out |= d.codes
        pos += len(line)
    return frozenset({ALL} if ALL in out else out)


# flake8's own pattern (flake8.defaults.NOQA_FILE, flake8 7.x), matched at the start of each physical line.
_FLAKE8_NOQA_FILE = re.compile(r"\s*# flake8[:=]\s*noqa", re.I)


def flake8_skips_file(text: str) -> bool:
    """Whether flake8 skips this Python file for a ``# flake8: noqa`` line, so that kv4lint's own command skips
    it too: exactly flake8's reading (FileProcessor.should_ignore_file), which is not kv4lint's grammar --
    a line that *starts* with the comment, whatever follows it (``# flake8: noqa: E501`` too, in flake8 7),
    and flake8 does not ask whether the line is inside a string."""
    if "flake8" not in text.lower():
        return False
    return any(_FLAKE8_NOQA_FILE.match(line) for line in re.split(r"\r\n|\r|\n", text))


def covers(codes: Iterable[str], code: str) -> bool:
    """Do ``codes`` (as read from comments) cover ``code``?"""
    return any(c == ALL or code.startswith(c) for c in codes)


def missing(codes: Iterable[str], have: Iterable[str]) -> list[str]:
    """The ``codes`` a comment with ``have`` does not cover yet, in order, once each."""
    have = set(have)
    out: list[str] = []
    for c in codes:
        if not covers(have, c) and c not in out:
            out.append(c)
    return out


# JSON files whose readers accept ``//`` and ``/* */`` comments (JSONC): by suffix, by name (VS Code's
# settings and debug configurations, devcontainers, TypeScript's configuration), by folder.
JSONC_SUFFIXES = (".jsonc", ".json5", ".code-workspace")
JSONC_NAMES = frozenset({"devcontainer.json", ".devcontainer.json", "tsconfig.json", "jsconfig.json",
                         "launch.json", "settings.json", "tasks.json", "extensions.json", "keybindings.json",
                         "argv.json"})
JSONC_FOLDERS = frozenset({".vscode", ".devcontainer"})


def json_takes_comments(path: str) -> bool:
    """Is ``path`` JSON with comments (JSONC), read by tools that accept ``//`` comments?"""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1].lower()
    if name.endswith(JSONC_SUFFIXES) or name in JSONC_NAMES:
        return True
    if name.startswith(("tsconfig.", "jsconfig.")) and name.endswith(".json"):
        return True
    return len(parts) > 1 and parts[-2] in JSONC_FOLDERS and name.endswith(".json")


def leader_for(language: str | None, path: str) -> str | None:
    """The comment leader a suppression takes in a file of ``language`` (``None``: the format has no comments)."""
    if language == "json":
        return "//" if json_takes_comments(path) else None
    return "#"


def disable_comment(codes: Iterable[str], leader: str = "#") -> str:
    return f"{leader} kv4lint: disable={','.join(codes)}"


def noqa_comment(codes: Iterable[str]) -> str:
    return f"# noqa: {','.join(codes)}"
