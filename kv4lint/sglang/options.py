"""SGLang's CLI options per release, and argparse-faithful normalisation of a
launch's arguments to ServerArgs field names (spec §5).

Facts about SGLang's interface, not rules: which option strings exist in a
release, what field each sets, how many values it takes, which choices it
accepts; and how argparse reads them (exact match wins, otherwise a unique
prefix; ``--flag=value``; the last occurrence wins).
"""

from __future__ import annotations

import functools
import gzip
import json
import os
from dataclasses import dataclass, field

from packaging.version import Version

from kv4lint.model import Launch, Provenance, Span, Value
from kv4lint.target import parse_version

# Releases whose tables are in the data file were inspected; others use the
# newest inspected release before them (spec header).
_OLDEST_KV_CHOICES = {
    # spec §1.2 for releases before the oldest table
    (0, 5, 4): ["auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16"],
    (0, 0, 0): ["auto", "fp8_e5m2", "fp8_e4m3"],
}

# Field names that older releases spelled differently (copied in from_cli_args).
_DEST_ALIASES = {
    "tensor_parallel_size": "tp_size",
    "data_parallel_size": "dp_size",
    "pipeline_parallel_size": "pp_size",
    "expert_parallel_size": "ep_size",
}


@dataclass(frozen=True)
class Option:
    dest: str
    arity: str  # flag | value | list+ | list* | optional-value
    choices: tuple[str, ...] | None


@functools.lru_cache(maxsize=1)
def _raw() -> dict:
    try:  # a plain file beside this module, as installed: importlib.resources costs 4 ms of imports
        with open(os.path.join(os.path.dirname(__file__), "data", "options.json.gz"), "rb") as f:
            data = f.read()
    except OSError:  # a zip import
        from importlib import resources

        data = resources.files("kv4lint.sglang").joinpath("data/options.json.gz").read_bytes()
    return json.loads(gzip.decompress(data))


@functools.lru_cache(maxsize=None)
def _table_by_key(key: str) -> dict[str, Option]:
    raw = _raw()
    entry = raw[key]
    while "same_as" in entry:
        entry = raw[entry["same_as"]]
    out = {}
    for opt, (dest, arity, choices) in entry.items():
        out[opt] = Option(_DEST_ALIASES.get(dest, dest), arity,
                          tuple(choices) if isinstance(choices, list) else None)
    return out


def known_releases() -> list[str]:
    return sorted(_raw(), key=Version)


@functools.lru_cache(maxsize=None)
def table(version: str | None) -> dict[str, Option]:
    """The option table of ``version`` (the newest inspected release at or before it)."""
    releases = known_releases()
    if version is None:
        return _table_by_key(releases[-1])
    v = parse_version(version) if isinstance(version, str) else version
    best = None
    for r in releases:
        if Version(r) <= v or (Version(r).release[:3] == v.release[:3]):
            best = r
    if best is None:
        # Older than every inspected release: the oldest table, with that era's dtype choices.
        t = dict(_table_by_key(releases[0]))
        for floor, choices in sorted(_OLDEST_KV_CHOICES.items(), reverse=True):
            if v.release[:3] >= floor:
                old = t["--kv-cache-dtype"]
                t["--kv-cache-dtype"] = Option(old.dest, old.arity, tuple(choices))
                break
        t.pop("--prefill-kv-cache-dequant-dtype", None)
        return t
    return _table_by_key(best)


def kv_cache_dtype_choices(version: str | None) -> tuple[str, ...]:
    return table(version)["--kv-cache-dtype"].choices or ()


def option_strings_for(field_name: str, version: str | None) -> list[str]:
    return [o for o, opt in table(version).items() if opt.dest == field_name]


def flag_for(field_name: str, version: str | None = None) -> str:
    """The canonical spelling of a field's option (``kv_cache_dtype`` -> ``--kv-cache-dtype``)."""
    opts = option_strings_for(field_name, version)
    canonical = "--" + field_name.replace("_", "-")
    if canonical in opts or not opts:
        return canonical
    return opts[0]


# ---------------------------------------------------------------------------


@dataclass
class Occurrence:
    """One appearance of an option in argv: its option token and value token(s)."""

    option: Value  # the token that names the option ("--kv-cache-dtype" or "--kv-cache-dtype=nvfp4")
    values: list[Value]  # value tokens (for "--x=v": a sub-value of the same token)
    inline: bool = False  # "--x=v" form
    spelled: str = ""  # the option string as written (before '=')
    from_config: bool = False


@dataclass
class Args:
    """A launch's server arguments by ServerArgs field name.

    ``values[field]`` is the effective value (the last occurrence wins);
    ``occurrences[field]`` lists every appearance (a fix must edit the last one
    and may remove all).  ``open_ended`` is true when an unknown token could add
    arguments kv4lint cannot see (``"$@"``, ``$EXTRA``, ``**kwargs``); fields
    not set explicitly are then unknown rather than defaulted.
    """

    values: dict[str, Value] = field(default_factory=dict)
    occurrences: dict[str, list[Occurrence]] = field(default_factory=dict)
    open_ended: bool = False
    problems: list[tuple[str, Value]] = field(default_factory=list)  # (message, token)
    form: str = "argv"

    def get(self, name: str) -> Value | None:
        return self.values.get(name)


def _sub(value: Value, start: int, end: int | None = None) -> Value:
    """The part ``text[start:end]`` of a token, with a span if the token is verbatim."""
    assert value.text is not None
    text = value.text[start:end]
    span = None
    stop = len(value.text) if end is None else end
    if value.span is not None and value.span.end - value.span.start == len(value.text):
        span = Span(value.span.start + start, value.span.start + stop)
    elif value.offsets is not None and stop > start:
        part = value.offsets[start:stop]
        if all(b == a + 1 for a, b in zip(part, part[1:])):
            span = Span(part[0], part[-1] + 1)
    return Value(text, span, value.provenance, use=value.use if value.use else None, shared=value.shared)


def _looks_like_option(text: str | None, tbl: dict[str, Option]) -> bool:
    if text is None:
        return False
    if not text.startswith("-") or text == "-":
        return False
    if len(text) > 1 and (text[1].isdigit() or text[1] == "."):
        return False  # negative number
    if " " in text and text.split("=", 1)[0] not in tbl:
        return False
    return True


def resolve_option(name: str, tbl: dict[str, Option]) -> tuple[str | None, str | None]:
    """argparse's lookup: exact match, else a unique prefix.  Returns (option, problem)."""
    if name in tbl:
        return name, None
    if not name.startswith("--"):
        return None, None
    matches = [o for o in tbl if o.startswith(name)]
    if len(matches) == 1:
        return matches[0], None
    if len(matches) > 1:
        return None, f"ambiguous option: {name} could match {', '.join(sorted(matches))}"
    return None, None


def normalise_argv(tokens: list[Value], version: str | None, *, config: list[Value] | None = None) -> Args:
    """Read ``tokens`` (the arguments after the entry point) as SGLang's parser of ``version`` would."""
    tbl = table(version)
    args = Args(form="argv")
    seq = [(t, True) for t in (config or [])] + [(t, False) for t in tokens]
    i = 0
    while i < len(seq):
        tok, from_cfg = seq[i]
        i += 1
        if tok.text is None:
            args.open_ended = True  # an unknown word may be an option, a value, or several of them
            continue
        text = tok.text
        if text == "--":
            break
        if not _looks_like_option(text, tbl):
            continue  # positional (e.g. `sglang serve MODEL`) or stray word
        name, inline = (text.split("=", 1) + [None])[:2] if "=" in text and text not in tbl else (text, None)
        opt, problem = resolve_option(name, tbl)
        if problem:
            args.problems.append((problem, tok))
        if opt is None:
            # An option of the entry point's own parser (a bench script's --result-filename X)
            # or an unknown one: a following word that is not an option is its value, not a
            # server argument kv4lint cannot see.
            if inline is None and i < len(seq) and not seq[i][0].splat and (
                    seq[i][0].text is None or not _looks_like_option(seq[i][0].text, tbl)):
                i += 1
            continue
        spec = tbl[opt]
        dest = spec.dest
        occ = Occurrence(tok, [], inline is not None, name, from_cfg)
        if inline is not None:
            occ.values.append(_sub(tok, len(name) + 1))
        elif spec.arity == "flag":
            pass
        elif spec.arity in ("value", "optional-value"):
            if i < len(seq) and (seq[i][0].text is None or not _looks_like_option(seq[i][0].text, tbl)):
                # An unknown word in value position ("--port $PORT") is this option's value; kv4lint
                # does not assume it splits into more server arguments.
                occ.values.append(seq[i][0])
                i += 1
        else:  # list+ / list*
            while i < len(seq) and (seq[i][0].text is None or not _looks_like_option(seq[i][0].text, tbl)):
                occ.values.append(seq[i][0])
                i += 1
        args.occurrences.setdefault(dest, []).append(occ)
        if spec.arity == "flag":
            args.values[dest] = Value("true", tok.span, tok.provenance, use=tok.use, shared=tok.shared)
        elif occ.values:
            v = occ.values[0] if spec.arity in ("value", "optional-value") else occ.values[-1]
            if v.splat:
                v = Value.unknown(v.anchor)
            args.values[dest] = v
        else:
            args.values[dest] = Value.unknown(tok.anchor)
    return args


def normalise_kwargs(kwargs: dict[str, Value], positional: list[Value], *, unknown_rest: bool = False) -> Args:
    """ServerArgs/Engine keyword arguments are field names already (no aliases, no choices check)."""
    args = Args(form="kwargs", open_ended=unknown_rest)
    if positional:
        kwargs = {"model_path": positional[0], **kwargs}
    for name, value in kwargs.items():
        args.values[name] = value
        args.occurrences[name] = [Occurrence(value, [value], spelled=name)]
    return args


def normalise(launch: Launch, version: str | None) -> Args:
    if launch.form == "kwargs":
        return normalise_kwargs(launch.kwargs, launch.positional, unknown_rest=launch.unknown_kwargs)
    return normalise_argv(launch.argv, version, config=launch.config_argv)


def literal_tokens(words: list[str]) -> list[Value]:
    """Tokens for an argv given as plain strings (the API, tests): no spans."""
    return [Value(w, None, Provenance.LITERAL) for w in words]
