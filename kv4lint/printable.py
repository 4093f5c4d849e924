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
to be read back (``--diff`` quotes names as git does, :mod:`kv4lint.fixer`).

Every text format (text, full, concise, github, the ``--show-*`` listings and
error lines) prints paths and messages through it.  A leaf module: it imports
nothing of kv4lint's.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


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
