"""The cheap test every file goes through before any parse.

A launch needs SGLang's name somewhere in the file (a module, a CLI, an
import, an image) or one of ServerArgs' KV-cache spellings; files without any
of these substrings cost only their read.  The same needles are used by the
benchmark's grep floor.
"""

from __future__ import annotations

import re

NEEDLES = ("sglang", "ServerArgs", "kv_cache_dtype", "kv-cache-dtype", "kv-cache", "kv_cache", "prefill-kv-cache-dequant")
# One compiled alternation; bytes and str flavours.  "kv-cache"/"kv_cache" cover
# abbreviations (--kv-cache=nvfp4) and config files (kv-cache-dtype: nvfp4).
_PATTERN = "|".join(re.escape(n) for n in ("sglang", "ServerArgs", "kv-cache", "kv_cache", "SGLANG", "SGLang"))
_RE_STR = re.compile(_PATTERN)
_RE_BYTES = re.compile(_PATTERN.encode())
GREP_PATTERN = _PATTERN.replace("\\", "")


def might_launch(text: str) -> bool:
    return _RE_STR.search(text) is not None


def might_launch_bytes(data: bytes) -> bool:
    return _RE_BYTES.search(data) is not None
