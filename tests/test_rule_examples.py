"""Every rule's examples, run through the real CLI with their targets (Fixit's VALID/INVALID, ShellCheck's
verify/verifyNot): a must-fire example is reported with its code, a must-not-fire example is not.

The same examples are what `kv4lint explain CODE` prints and what docs/rules/KV40N.md show (generated).
"""

import json
import re

import pytest

from kv4lint.cli import main
from kv4lint.rules.codes import RULES

EXAMPLES = [(code, i, ex) for code, r in sorted(RULES.items()) for i, ex in enumerate(r.examples)]


def test_every_rule_has_examples_that_fire_and_that_do_not():
    for code, r in RULES.items():
        assert any(e.fires for e in r.examples), code
        assert any(not e.fires for e in r.examples), code
        assert re.fullmatch(r"\d+\.\d+\.\d+", r.since), f"{code}: since {r.since!r} is not a release"


@pytest.mark.parametrize("code,i,ex", EXAMPLES, ids=[f"{c}-{i}-{'fires' if e.fires else 'not'}"
                                                     for c, i, e in EXAMPLES])
def test_example_through_the_cli(code, i, ex, tmp_path, capsys):
    script = tmp_path / "launch.sh"
    script.write_text("#!/bin/sh\n" + ex.launch + "\n", encoding="utf-8")
    status = main(["check", "--isolated", "--no-cache", "--jobs", "1", "--format", "json", *ex.target, str(script)])
    doc = json.loads(capsys.readouterr().out)
    assert doc["errors"] == []
    codes = [f["code"] for f in doc["findings"]]
    if ex.fires:
        assert codes and codes[0] == code, (ex.launch, ex.target, [f["message"] for f in doc["findings"]])
        assert status == 1
    else:
        assert code not in codes, (ex.launch, ex.target, [f["message"] for f in doc["findings"]])


def test_explain_prints_every_example_with_its_target(capsys):
    for code, r in RULES.items():
        assert main(["explain", code]) == 0
        out = capsys.readouterr().out
        for ex in r.examples:
            for line in ex.text().splitlines():
                assert line in out, (code, line)
        assert "# target: " in out
