"""Fixes as text edits: planned from a finding's fix, applied to a text, written back; --add-suppressions."""
