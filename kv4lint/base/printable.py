"""Text from the scanned tree, made safe to print on a terminal.

File names, values and source lines come from the tree being checked, which a
stranger's pull request controls.  A name such as ``run\\x1b]0;pwned\\x07.sh``
printed raw retitles the terminal, moves its cursor or hides the line that
follows; a newline or tab in a name breaks the one-line-per-finding format
that editors and grep read.  :func:`printable` writes such characters as
escapes: C0 controls and DEL (``\\t``, ``\\n``, ``\\r``, else ``\\xNN``), C1
controls, the Unicode bidirectional overrides that reorder what a reader sees,
and bytes that were not UTF-8 (kept by the file system as lone surrogates) as
``\\xNN``.  A backslash stays as it is: the output is for people, not a quoting
to be read back (``--diff`` quotes names as git does, :mod:`kv4lint.pipeline.fix_engine`).

Every text format (text, full, concise, github, the ``--show-*`` listings and
error lines) prints paths and messages through it.  The JSON formats (json,
sarif, gitlab) escape control characters as JSON does and keep the name exact,
except for bytes that were not UTF-8, which no JSON string can hold: those are
written as ``\\xNN`` there too (:func:`json_text`), so that one name reads the
same in every format (and a SARIF URI percent-encodes the bytes themselves).
A leaf module: it imports nothing of kv4lint's.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(m: re.Match) -> str:
    ch = m.group()
    if ch in _NAMED:
        return _NAMED[ch]
    o = ord(ch)
    if 0xDC80 <= o <= 0xDCFF:  # a byte the file system name held that is not UTF-8 (surrogateescape)
        return f"\\x{o - 0xDC00:02x}"
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def printable(text: str, *, keep: str = "") -> str:
    """``text`` with every character that would control a terminal written as an escape.

    ``keep``: whitespace controls to leave as they are (``"\t"`` for a source line under a caret, which keeps
    its alignment; ``"\r\n"`` where the format escapes line breaks itself).
    """
    if not _UNSAFE.search(text):
        return text
    return _UNSAFE.sub(lambda m: m.group() if m.group() in keep else _escape(m), text)


def json_text(text: str) -> str:
    """A JSON document's text with every lone surrogate (a byte of a name that was not UTF-8, or an unpaired
    surrogate of a scanned value) written as the characters ``\\xNN`` / ``\\uXXXX``: valid UTF-8 that every
    JSON reader takes, where the raw surrogate is neither."""
    if not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(lambda m: "\\" + _escape(m), text)  # the backslash, escaped as JSON writes it
