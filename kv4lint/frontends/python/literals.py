"""Python string literals: the characters a literal stands for, and where each is written in the source."""

from __future__ import annotations

import re
import unicodedata

_SIMPLE_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n",
                   "r": "\r", "t": "\t", "v": "\v"}


def split_literal(token: str) -> tuple[str, str, int, int]:
    """A string token -> (prefix, quote, body start, body end), e.g. ``rb'x'`` -> ("rb", "'", 3, 4)."""
    i = 0
    while i < len(token) and token[i] not in "'\"":
        i += 1
    prefix = token[:i]
    q = token[i:i + 3] if token[i:i + 3] in ('"""', "'''") else token[i:i + 1]
    return prefix, q, i + len(q), len(token) - len(q)


def decode_body(body: str, start: int, *, raw: bool, is_bytes: bool = False,
                fstring: bool = False) -> tuple[str, list[int | None]] | None:
    """Decode a literal's body as Python does; ``offs[i]`` is the offset of output char ``i``
    when it is written verbatim at ``start + k``, else None (an escape, ``{{`` in an f-string).

    Returns None when the body does not decode (an unknown ``\\N{...}`` name).
    """
    out: list[str] = []
    offs: list[int | None] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if fstring and c in "{}" and i + 1 < n and body[i + 1] == c:
            out.append(c)
            offs.append(None)
            i += 2
            continue
        if c != "\\" or raw:
            out.append(c)
            offs.append(start + i)
            i += 1
            continue
        if i + 1 >= n:
            out.append(c)
            offs.append(start + i)
            i += 1
            continue
        d = body[i + 1]
        if d == "\n":
            i += 2
            continue
        if d == "\r":
            i += 3 if body[i + 2:i + 3] == "\n" else 2
            continue
        if d in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[d])
            offs.append(None)
            i += 2
            continue
        if d in "01234567":
            j = i + 1
            while j < n and j < i + 4 and body[j] in "01234567":
                j += 1
            out.append(chr(int(body[i + 1:j], 8)))
            offs.append(None)
            i = j
            continue
        if d == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", body[i + 2:i + 4] or ""):
            out.append(chr(int(body[i + 2:i + 4], 16)))
            offs.append(None)
            i += 4
            continue
        if not is_bytes and d in "uU":
            k = 4 if d == "u" else 8
            h = body[i + 2:i + 2 + k]
            if re.fullmatch(r"[0-9a-fA-F]{%d}" % k, h or ""):
                try:
                    out.append(chr(int(h, 16)))
                except (ValueError, OverflowError):
                    return None
                offs.append(None)
                i += 2 + k
                continue
            return None
        if not is_bytes and d == "N" and body[i + 2:i + 3] == "{":
            j = body.find("}", i + 3)
            if j < 0:
                return None
            try:
                out.append(unicodedata.lookup(body[i + 3:j]))
            except KeyError:
                return None
            offs.append(None)
            i = j + 1
            continue
        # Unknown escape: the backslash stays.
        out.append(c)
        offs.append(start + i)
        i += 1
    return "".join(out), offs


def decode_literal(token: str, start: int) -> tuple[str, list[int | None], str] | None:
    """A whole string token (prefix, quotes) written at ``start`` -> (text, offsets, quote)."""
    prefix, q, b0, b1 = split_literal(token)
    p = prefix.lower()
    r = decode_body(token[b0:b1], start + b0, raw="r" in p, is_bytes="b" in p)
    if r is None:
        return None
    return r[0], r[1], q
