"""kv4lint's reading of SGLang's argument parser against argparse itself.

For a few releases, a real ``argparse.ArgumentParser()`` (as ``prepare_server_args`` builds it: default
``allow_abbrev``, ``-h/--help``) gets every option of kv4lint's table for that release, with its arity and
choices; each argv below must be refused by argparse exactly when kv4lint reports a refusal of the same
kind.  The tables are the project's own data (``kv4lint.sglang.options``), so this checks kv4lint's model
of argparse (prefixes, ``--x=v``, values that look like options, negative numbers), not the data.
"""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from kv4lint.base.model import Launch, Span
from kv4lint.rules.parser import refused
from kv4lint.sglang.options import literal_tokens, normalise_argv, table

NARGS = {"flag": 0, "value": None, "list+": "+", "list*": "*", "optional-value": "?"}


def real_parser(version: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sglang serve", exit_on_error=False)
    groups: dict[tuple, list[str]] = {}
    for opt, spec in table(version).items():
        groups.setdefault((spec.dest, spec.arity, spec.choices), []).append(opt)
    for (dest, arity, choices), opts in groups.items():
        kw: dict = {"dest": f"{dest}_{arity}"}
        if arity == "flag":
            kw["action"] = "store_true"
        else:
            kw["nargs"] = NARGS[arity]
            if choices is not None:
                kw["choices"] = list(choices)
                kw["type"] = str if all(isinstance(c, str) for c in choices) else int
        parser.add_argument(*opts, **kw)
    return parser


def argparse_refuses(version: str, words: list[str]) -> bool:
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            real_parser(version).parse_args(words)
        except (argparse.ArgumentError, SystemExit):
            return True
    return False


def kv4lint_refuses(version: str, words: list[str]) -> list[str]:
    args = normalise_argv(literal_tokens(words), version)
    launch = Launch("<argv>", "argv", "sglang.launch_server", Span(0, 0), Span(0, 0), argv=literal_tokens(words))
    return [p.kind for p in refused(launch, args, version)]


BASE = ["--model-path", "m", "--kv-cache-dtype", "fp8_e4m3"]
CASES = [
    [],
    ["--fp4-kv-cache-recipe", "nvfp4"],  # an option no release has
    ["--kv_cache_dtype", "fp8_e4m3"],  # underscores: not an option
    ["--kv-cache-dtyp", "fp8_e4m3"],  # a unique prefix: accepted
    ["--kv-cache=fp8_e4m3"],  # a prefix with =value
    ["--attention-backend", "triton"],
    ["--attention-backend", "dsv5"],  # not a choice
    ["--attention-backend=dsv5"],
    ["--attention-backend"],  # no value at the end
    ["--attention-backend", "--page-size", "16"],  # an option where the value should be
    ["--attention", "triton"],  # ambiguous from 0.5.9
    ["--cuda-graph-max-bs", "8"],  # an option before 0.5.20, ambiguous after
    ["--page-size", "-1"],  # a negative number is a value
    ["--trust-remote-code=1"],  # a flag given a value
    ["--trust-remote-code"],
    ["--tp", "2"],  # a unique prefix of --tp-size
    ["--disaggregation-mode", "decode"],
    ["--disaggregation-mode", "Decode"],  # choices are case-sensitive
    ["--cuda-graph-bs"],  # list+ without values
    ["--cuda-graph-bs", "1", "2", "4"],
    ["-tp", "2"],  # a single-dash spelling no release has
    ["--bogus-flag", "1"],
]


@pytest.mark.parametrize("version", ["0.5.7", "0.5.16", "0.5.23"])
@pytest.mark.parametrize("extra", CASES, ids=[" ".join(c) or "none" for c in CASES])
def test_refusals_match_argparse(version, extra):
    words = BASE + extra
    assert bool(kv4lint_refuses(version, words)) == argparse_refuses(version, words), words


def test_ambiguity_changes_with_the_release():
    # --cuda-graph-max-bs is an option up to 0.5.19; 0.5.20 split it into -decode/-prefill, a prefix of both.
    assert kv4lint_refuses("0.5.19", BASE + ["--cuda-graph-max-bs", "8"]) == []
    assert kv4lint_refuses("0.5.23", BASE + ["--cuda-graph-max-bs", "8"]) == ["ambiguous"]
