"""kv4lint's rule codes: one home module per code (``kv401`` ... ), registered in :data:`RULES`.

Each home holds its code's metadata, the text of ``kv4lint explain`` and the rule page, its examples (launches
that must fire and must not, with their targets) and its message builder ``say``. The engine
(:mod:`kv4lint.rules.engine`) decides what SGLang does; :mod:`kv4lint.rules.check` picks the code and asks its
home to say it.
"""

from __future__ import annotations

from kv4lint.rules.codes import kv401, kv402, kv403, kv404, kv405, kv406, kv407, kv408, kv409
from kv4lint.rules.codes.base import Context, Example, Rule, Said

_HOMES = (kv401, kv402, kv403, kv404, kv405, kv406, kv407, kv408, kv409)
RULES: dict[str, Rule] = {m.RULE.code: m.RULE for m in _HOMES}

INTERNAL_CODE = "KV400"  # internal failures surfaced as a finding (flake8 plugin)

__all__ = ["RULES", "INTERNAL_CODE", "Context", "Example", "Rule", "Said"]
