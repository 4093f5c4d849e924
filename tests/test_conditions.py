"""The grammar of the conditions that select a launch's paths (kv4lint/base/conditions.py): atoms, which exclude each
other, the condition that names only what decides a finding, and the headline's short form."""

from __future__ import annotations

import pytest

from kv4lint.base.conditions import brief, conflict, contradictory, decisive, split_top, terms


def test_atoms_are_split_outside_backticks_quotes_and_brackets():
    assert terms("FP4=1 and `grep -q 'a and b' f` succeeds or not (x and y)") == [
        ("FP4=1", "`grep -q 'a and b' f` succeeds"), ("not (x and y)",)]
    assert split_top("MODE='a and b' and X=1", " and ") == ["MODE='a and b'", "X=1"]
    assert terms(None) == [()] and terms("") == [()]


@pytest.mark.parametrize("a,b", [
    ("FP4=1", "FP4!=1"), ("MODE=fp4", "MODE=fp8"), ("MODE=fp4|nvfp4", "MODE is none of fp4, nvfp4"),
    ("X is empty", "X is not empty"), ("X=", "X is not empty"), ("`nvidia-smi` succeeds", "`nvidia-smi` fails"),
    ("args.fp4", "not args.fp4"), ("(a or b)", "not (a or b)"), ("mode == 'fp4'", 'mode == "fp8"'),
    ("mode == 'fp4'", "mode != 'fp4'"), ("x is None", "x is not None"),
])
def test_atoms_that_exclude_each_other(a, b):
    assert conflict(a, b) and conflict(b, a)


@pytest.mark.parametrize("a,b", [
    ("FP4=1", "FP4=1"), ("FP4=1", "MEM!=1"), ("MODE=fp4|nvfp4", "MODE=fp4"), ("FP4!=1", "FP4!=0"),
    ("mode == 'fp4'", "mode == x"), ("args.fp4", "args.fp8"), ("a", "not (a and b)"), ("MODE is any", "MODE=x"),
])
def test_atoms_that_do_not(a, b):
    assert not conflict(a, b) and not conflict(b, a)


def test_contradictory():
    assert contradictory(["FP4=1", "MEM=1", "FP4!=1"])
    assert not contradictory(["FP4=1", "MEM=1", "FP4=1"])


def test_decisive_names_only_what_decides():
    knobs = [f"FP4={f} and BIG={b} and MEM={m}".replace("=!", "!=") for f in ("1", "!1") for b in ("1", "!1")
             for m in ("1", "!1")]
    hits = [k for k in knobs if k.startswith("FP4=1")]
    assert decisive(hits, [k for k in knobs if k not in hits]) == "FP4=1"
    # An elif arm keeps the earlier test it needs: GPU=h100 with FP4 set takes the first arm.
    assert decisive(["GPU!=h100 and FP4 is not empty"], ["GPU=h100", "GPU!=h100 and FP4 is empty"]) == \
        "GPU!=h100 and FP4 is not empty"
    # A test that implies the other's failure: one atom is enough.
    assert decisive(['mode != "fp8" and mode == "fp4"'], ['mode == "fp8"', 'mode != "fp8" and mode != "fp4"']) == \
        'mode == "fp4"'
    # Every reading has it: no condition.
    assert decisive(["A=1", "A!=1"], []) is None
    # Two readings of different knobs: both named, joined by "or".
    assert decisive(["A=1 and B!=1", "A!=1 and B=1"], ["A=1 and B=1", "A!=1 and B!=1"]) == \
        "A=1 and B!=1 or A!=1 and B=1"


def test_brief_cuts_after_a_whole_atom():
    assert brief("FP4=1", 40) == "FP4=1"
    assert brief("FP4=1 and MEM=1 and BIG=1 and PUBLIC=1 and PROD=1", 40) == "FP4=1 and MEM=1 and BIG=1..."
    span = "`grep -q 'B200 and H200' /etc/gpu-inventory` succeeds"
    assert brief(f"{span} and FP4=1", 40) == f"{span}..."
    assert brief(span, 40) == span
