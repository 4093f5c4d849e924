"""Settings from the command line (and, later, configuration files)."""

from __future__ import annotations

import argparse

from kv4lint.settings import Settings


def _codes(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [c.strip().upper() for c in text.split(",") if c.strip()]


def build_settings(ns: argparse.Namespace, paths: list[str]) -> Settings:
    """Settings for a CLI run: command-line options over defaults."""
    s = Settings()
    for name in ("sglang_version", "platform", "gpu", "model_attention", "fix_dtype"):
        v = getattr(ns, name, None)
        if v is not None:
            setattr(s, name, v)
            s.sources[name] = "--" + name.replace("_", "-")
    if getattr(ns, "strict", False):
        s.strict = True
    if getattr(ns, "select", None) is not None:
        s.select = _codes(ns.select)
    if getattr(ns, "extend_select", None):
        s.extend_select = _codes(ns.extend_select) or []
    if getattr(ns, "ignore", None):
        s.ignore = _codes(ns.ignore) or []
    if getattr(ns, "exclude", None):
        s.exclude = [p for p in ns.exclude.split(",") if p]
    if getattr(ns, "extend_exclude", None):
        s.extend_exclude = [p for p in ns.extend_exclude.split(",") if p]
    return s
