"""SGLang's CLI options per release, and argparse-faithful normalisation of a
launch's arguments to ServerArgs field names (docs/sglang-rules.md §5).

Facts about SGLang's interface, not rules: which option strings exist in a
release, what field each sets, how many values it takes, which choices it
accepts; and how argparse reads them (exact match wins, otherwise a unique
prefix; ``--flag=value``; the last occurrence wins).
"""

from __future__ import annotations

import bisect
import fnmatch
import functools
import gzip
import json
import os
from packaging.version import Version

from kv4lint.base.memo import Memo
from kv4lint.base.model import Launch, Provenance, Span, Value
from kv4lint.base.record import Frozen, Record
from kv4lint.sglang.commands import HYDRA_ENTRIES, PREFIXED_ENTRIES
from kv4lint.sglang.releases import parse as parse_version

# Releases whose tables are in the data file were inspected; others use the
# newest inspected release before them (docs/sglang-rules.md, Sources).
_OLDEST_KV_CHOICES = {
    # docs/sglang-rules.md §1.2 for releases before the oldest table
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


# Options whose choices depend on the environment or installed plugins (SGLang computes or extends them when
# it runs; tools/gen_options.py stores the stock list, or "<dynamic>" where it cannot read one): kv4lint
# cannot know them, so it checks no value of these against a list.
DYNAMIC_CHOICES = frozenset({"--sampling-backend", "--reasoning-parser", "--tool-call-parser",
                             "--kv-canary-real-data", "--cuda-graph-backend-decode", "--cuda-graph-backend-prefill",
                             "--lora-target-modules", "--speculative-draft-model-quantization"})

# Retired options that SGLang still registers with an action that stops the parser (``DeprecatedAction``
# with an ``error_message``), by the releases that do so: option -> (first, last).
REFUSING_OPTIONS: dict[str, tuple[str, str]] = {
    "--enable-expert-distribution-metrics": ("0.5.18", "0.5.19"),
}


class Option(Frozen):
    """One option of a release's table: the ServerArgs field it sets, its arity (``flag``, ``value``, ``list+``,
    ``list*``, ``optional-value``) and its choices (None: any value)."""

    __slots__ = ("dest", "arity", "choices")

    def __init__(self, dest: str, arity: str, choices: tuple[str, ...] | None) -> None:
        self._set("dest", dest)
        self._set("arity", arity)
        self._set("choices", choices)


@functools.lru_cache(maxsize=1)
def _raw() -> dict:
    """The stored tables (``data/options.json.gz``, written by tools/gen_options.py through :func:`pack_tables`):
    ``{"specs": [[dest, arity, choices or None], ...], "releases": [[release, changes], ...]}``, the releases in
    order, the first one's changes its whole table, each other's what differs from the one before it (an option
    -> the index of its spec, or None where the option is gone).  Stored whole, the 26 releases were 680 kB of
    JSON, read on every run that judges a launch: its first table took 7.2 ms; as changes, 88 kB, and 1.8 ms."""
    try:  # a plain file beside this module, as installed: importlib.resources costs 4 ms of imports
        with open(os.path.join(os.path.dirname(__file__), "data", "options.json.gz"), "rb") as f:
            data = f.read()
    except OSError:  # a zip import
        from importlib import resources

        data = resources.files("kv4lint.sglang").joinpath("data/options.json.gz").read_bytes()
    return json.loads(gzip.decompress(data))


def _table_at(stored: dict, key: str) -> tuple[dict[str, int], str]:
    """Release ``key``'s table as stored (option -> spec index, sorted), and the release whose changes made it
    (``key`` itself, or the one before it whose table ``key`` keeps)."""
    table: dict[str, int] = {}
    base = key
    for release, changes in stored["releases"]:
        if changes:
            base = release
            for opt, spec in changes.items():
                if spec is None:
                    del table[opt]
                else:
                    table[opt] = spec
        if release == key:
            return dict(sorted(table.items())), base
    raise KeyError(key)


def pack_tables(tables: dict[str, dict[str, list]]) -> dict:
    """What :func:`_raw` reads, for ``tables`` (release -> option -> ``[dest, arity, choices or None]``):
    tools/gen_options.py writes it."""
    specs: list[list] = []
    index: dict[str, int] = {}
    releases: list[list] = []
    before: dict[str, int] = {}
    for release in sorted(tables, key=Version):
        table = {}
        for opt, spec in tables[release].items():
            k = json.dumps(spec)
            if k not in index:
                index[k] = len(specs)
                specs.append(spec)
            table[opt] = index[k]
        changes = {opt: i for opt, i in table.items() if before.get(opt) != i}
        changes.update((opt, None) for opt in before if opt not in table)
        releases.append([release, dict(sorted(changes.items()))])
        before = table
    return {"specs": specs, "releases": releases}


def stored_tables(stored: dict | None = None) -> dict[str, dict[str, list]]:
    """Every release's table as stored (in ``stored``, else in the data file): option -> ``[dest, arity, choices
    or None]`` (tools/gen_options.py compares the wheels' with them)."""
    stored = _raw() if stored is None else stored
    specs = stored["specs"]
    return {release: {opt: specs[i] for opt, i in _table_at(stored, release)[0].items()}
            for release, _ in stored["releases"]}


def _table_by_key(key: str) -> dict[str, Option]:
    """Release ``key``'s options: option string -> :class:`Option`, in the stored (sorted) order; the same dict
    for every release whose table is the one before it.

    Built on first use, with one :class:`Option` for each distinct spec (26 releases hold 8,778 options and
    about 760 specs): a run that judges an unpinned launch by every release keeps a few hundred objects, not
    11,000 lists and as many options for the cyclic collector to walk (the flake8 plugin runs inside flake8's
    process)."""
    built = _TABLES.get(key)
    if built is not None:
        return built
    stored = _raw()
    table, base = _table_at(stored, key)
    built = _TABLES.get(base)
    if built is None:
        specs = stored["specs"]
        built = _TABLES[base] = {opt: _option(specs, i) for opt, i in table.items()}
    _TABLES[key] = built
    return built


def _option(specs: list, i: int) -> Option:
    dest, arity, choices = specs[i]
    k = (_DEST_ALIASES.get(dest, dest), arity, tuple(choices) if isinstance(choices, list) else None)
    option = _SHARED.get(k)
    if option is None:
        option = _SHARED[k] = Option(*k)
    return option


_SHARED: dict[tuple, Option] = {}  # (dest, arity, choices) -> its one Option (_table_by_key)
_TABLES: dict[str, dict[str, Option]] = {}  # release -> its table (_table_by_key)


def known_releases() -> list[str]:
    return list(_known_releases())


@functools.lru_cache(maxsize=1)
def _known_releases() -> tuple[str, ...]:
    return tuple(sorted((release for release, _ in _raw()["releases"]), key=Version))


def _table_release(version) -> str | None:
    """The inspected release whose table ``version`` uses (the newest at or before it); None when older."""
    releases = known_releases()
    if version is None:
        return releases[-1]
    v = parse_version(version) if isinstance(version, str) else version
    best = None
    for r in releases:
        if Version(r) <= v or (Version(r).release[:3] == v.release[:3]):
            best = r
    return best


@functools.lru_cache(maxsize=256)
def inspected_release(version) -> str | None:
    """The inspected release whose parser ``version`` has, or None when kv4lint does not know its parser.

    ``None`` (the newest rule pack) is the newest inspected release.  A release older than every inspected
    one, or newer than the newest (``0.5.24``, ``0.6.0``), has a parser kv4lint has not read.
    """
    best = _table_release(version)
    if best is None or version is None:
        return best
    v = parse_version(version) if isinstance(version, str) else version
    if best == known_releases()[-1] and v.release[:3] > Version(best).release[:3]:
        return None
    return best


@functools.lru_cache(maxsize=None)
def in_any_release(option: str) -> tuple[str, frozenset | None] | None:
    """``option`` as some inspected release has it: (its arity in the oldest that has it, the union of its
    choices in all of them, None where none lists choices); None when no inspected release has it.

    """
    found = None
    for r in known_releases():
        spec = _table_by_key(r).get(option)
        if spec is None:
            continue
        if found is None:
            found = (spec.arity, None)
        if spec.choices is not None:
            found = (found[0], (found[1] or frozenset()) | frozenset(spec.choices))
    return found


def option_releases(option: str) -> list[str]:
    """The inspected releases whose parser has ``option`` (oldest first)."""
    return [r for r in known_releases() if option in _table_by_key(r)]


def choice_releases(option: str, value: str) -> list[str]:
    """The inspected releases where ``value`` is a choice of ``option``."""
    out = []
    for r in known_releases():
        spec = _table_by_key(r).get(option)
        if spec is not None and spec.choices is not None and _is_choice(value, spec.choices):
            out.append(r)
    return out


def unreleased(problem: Problem) -> str | None:
    """For a refused option or value that no inspected release has, a phrase naming it; else None.

    Such a word was written for an SGLang build kv4lint does not know (a development branch, a fork).
    """
    if problem.kind == "unknown" and problem.spelled.startswith("--") and "_" not in problem.spelled \
            and not option_releases(problem.spelled):
        return f"{problem.spelled} (an option of no release kv4lint knows)"
    if problem.kind == "choice" and problem.option and problem.value is not None and problem.value.text \
            and not choice_releases(problem.option, problem.value.text):
        return f"{problem.option} {problem.value.text} (a value of no release kv4lint knows)"
    return None


def _is_help(name: str) -> bool:
    """``-h``, ``--help`` and its prefixes: argparse's own help option, which every SGLang parser has."""
    return name == "-h" or (len(name) > 2 and "--help".startswith(name))


@functools.lru_cache(maxsize=None)
def table(version: str | None) -> dict[str, Option]:
    """The option table of ``version`` (the newest inspected release at or before it)."""
    releases = known_releases()
    best = _table_release(version)
    if best is None:
        v = parse_version(version) if isinstance(version, str) else version
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


@functools.lru_cache(maxsize=None)  # as table(): asked per finding and release, it scans the whole table
def flag_for(field_name: str, version: str | None = None) -> str:
    """The canonical spelling of a field's option (``kv_cache_dtype`` -> ``--kv-cache-dtype``)."""
    opts = option_strings_for(field_name, version)
    canonical = "--" + field_name.replace("_", "-")
    if canonical in opts or not opts:
        return canonical
    return opts[0]


# ---------------------------------------------------------------------------


class Occurrence(Record):
    """One appearance of an option in argv: ``option``, the token that names it (``--kv-cache-dtype`` or
    ``--kv-cache-dtype=nvfp4``); ``values``, its value tokens (for ``--x=v``: a sub-value of the same token);
    ``inline``: the ``--x=v`` form; ``spelled``: the option string as written (before ``=``); ``from_config``: read
    from a ``--config`` file."""

    __slots__ = ("option", "values", "inline", "spelled", "from_config")

    def __init__(self, option: Value, values: list[Value], inline: bool = False, spelled: str = "",
                 from_config: bool = False) -> None:
        self.option = option
        self.values = values
        self.inline = inline
        self.spelled = spelled
        self.from_config = from_config


class Problem(Frozen):
    """Something SGLang's argument parser refuses (argparse exits with status 2 before the server starts).

    ``kind``: ``"unknown"`` (no option of the release; argparse: unrecognized arguments),
    ``"ambiguous"`` (a prefix of several options), ``"choice"`` (a value outside the option's choices),
    ``"missing"`` (an option without its value), ``"explicit"`` (``--flag=value`` for an option that
    takes no value), ``"retired"`` (an option the release registers only to stop with a message).
    ``token`` is the option's token (``value`` the refused value token where there is one); ``option``
    the release's option string it resolved to (None for unknown and ambiguous ones); ``spelled`` the
    option as written; ``candidates`` the options an ambiguous prefix could mean; ``swallowed`` the
    tokens an unknown option took with it (argparse lists them among the unrecognized arguments).
    """

    __slots__ = ("kind", "token", "spelled", "option", "value", "candidates", "swallowed", "from_config")

    def __init__(self, kind: str, token: Value, spelled: str, option: str | None = None, value: Value | None = None,
                 candidates: tuple[str, ...] = (), swallowed: tuple[Value, ...] = (),
                 from_config: bool = False) -> None:
        self._set("kind", kind)
        self._set("token", token)
        self._set("spelled", spelled)
        self._set("option", option)
        self._set("value", value)
        self._set("candidates", candidates)
        self._set("swallowed", swallowed)
        self._set("from_config", from_config)


class Args(Record):
    """A launch's server arguments by ServerArgs field name.

    ``values[field]`` is the effective value (the last occurrence wins);
    ``occurrences[field]`` lists every appearance (a fix must edit the last one
    and may remove all).  ``open_ended`` is true when an unknown token could add
    arguments kv4lint cannot see (``"$@"``, ``$EXTRA``, ``**kwargs``); fields
    not set explicitly are then unknown rather than defaulted.
    """

    __slots__ = ("values", "occurrences", "open_ended", "problems", "form")

    def __init__(self, values: dict[str, Value] | None = None,
                 occurrences: dict[str, list[Occurrence]] | None = None, open_ended: bool = False,
                 problems: list[Problem] | None = None, form: str = "argv") -> None:
        self.values = {} if values is None else values
        self.occurrences = {} if occurrences is None else occurrences
        self.open_ended = open_ended
        self.problems = [] if problems is None else problems  # what SGLang's parser refuses, in argv order
        self.form = form

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


_SORTED: dict[int, tuple[dict, list[str]]] = {}


def prefixed(name: str, tbl: dict[str, Option]) -> list[str]:
    """The options of ``tbl`` that start with ``name``, sorted (a bisect in the sorted option strings)."""
    held = _SORTED.get(id(tbl))
    if held is None or held[0] is not tbl:
        held = _SORTED[id(tbl)] = (tbl, sorted(tbl))
    keys = held[1]
    i = bisect.bisect_left(keys, name)
    out = []
    while i < len(keys) and keys[i].startswith(name):
        out.append(keys[i])
        i += 1
    return out


def resolve_option(name: str, tbl: dict[str, Option]) -> tuple[str | None, str | None]:
    """argparse's lookup: exact match, else a unique prefix.  Returns (option, problem)."""
    if name in tbl:
        return name, None
    if not name.startswith("--"):
        return None, None
    matches = prefixed(name, tbl)
    if len(matches) == 1:
        return matches[0], None
    if len(matches) > 1:
        return None, f"ambiguous option: {name} could match {', '.join(sorted(matches))}"
    return None, None


def normalise_argv(tokens: list[Value], version: str | None, *, config: list[Value] | None = None) -> Args:
    """Read ``tokens`` (the arguments after the entry point) as SGLang's parser of ``version`` would."""
    tbl = table(version)
    args = Args(form="argv")
    # the config file's words, then the command line's (a word from the config file: at an index below ``ncfg``)
    seq = [*config, *tokens] if config else tokens
    ncfg = len(config) if config else 0
    n = len(seq)
    i = 0
    while i < n:
        tok = seq[i]
        from_cfg = i < ncfg
        i += 1
        text = tok.text
        if text is None:
            args.open_ended = True  # an unknown word may be an option, a value, or several of them
            continue
        if text == "--":
            break
        if not _looks_like_option(text, tbl):
            continue  # positional (e.g. `sglang serve MODEL`) or stray word
        name, inline = (text.split("=", 1) + [None])[:2] if "=" in text and text not in tbl else (text, None)
        opt, problem = resolve_option(name, tbl)
        if opt is None:
            # An option of the entry point's own parser (a bench script's --result-filename X)
            # or an unknown one: a following word that is not an option is its value, not a
            # server argument kv4lint cannot see.
            swallowed: tuple[Value, ...] = ()
            if inline is None and i < n and not seq[i].splat and (
                    seq[i].text is None or not _looks_like_option(seq[i].text, tbl)):
                swallowed = (seq[i],)
                i += 1
            if not _is_help(name):
                candidates = tuple(prefixed(name, tbl)) if problem else ()
                args.problems.append(Problem("ambiguous" if problem else "unknown", tok, name,
                                             candidates=candidates, swallowed=swallowed, from_config=from_cfg))
            continue
        spec = tbl[opt]
        dest = spec.dest
        occ = Occurrence(tok, [], inline is not None, name, from_cfg)
        if inline is not None:
            occ.values.append(_sub(tok, len(name) + 1))
        elif spec.arity == "flag":
            pass
        elif spec.arity in ("value", "optional-value"):
            if i < n and (seq[i].text is None or not _looks_like_option(seq[i].text, tbl)):
                # An unknown word in value position ("--port $PORT") is this option's value; kv4lint
                # does not assume it splits into more server arguments.
                occ.values.append(seq[i])
                i += 1
        else:  # list+ / list*
            while i < n and (seq[i].text is None or not _looks_like_option(seq[i].text, tbl)):
                occ.values.append(seq[i])
                i += 1
        args.problems.extend(_refusals(opt, spec, occ, seq[i] if i < n else None, version))
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


def _refusals(opt: str, spec: Option, occ: Occurrence, after: Value | None, version: str | None) -> list[Problem]:
    """What argparse refuses in one occurrence of a known option (its values as read above)."""
    tok, cfg = occ.option, occ.from_config
    retired = REFUSING_OPTIONS.get(opt)
    rel = inspected_release(version) if retired else None  # (parsed for the few options that may be retired)
    if retired and rel is not None and Version(retired[0]) <= Version(rel) <= Version(retired[1]):
        return [Problem("retired", tok, occ.spelled, opt, from_config=cfg)]
    if occ.inline and spec.arity == "flag":
        return [Problem("explicit", tok, occ.spelled, opt, occ.values[0] if occ.values else None, from_config=cfg)]
    if not occ.values and spec.arity in ("value", "list+") and not occ.inline:
        if after is None or (after.text is not None and not after.splat):
            # argparse: "expected one argument" / "expected at least one argument"
            return [Problem("missing", tok, occ.spelled, opt, after, from_config=cfg)]
        return []
    if spec.choices is None or opt in DYNAMIC_CHOICES:
        return []
    out = []
    for v in occ.values:
        if v.text is not None and not v.splat and not _is_choice(v.text, spec.choices):
            out.append(Problem("choice", tok, occ.spelled, opt, v, from_config=cfg))
    return out


def _is_choice(text: str, choices: tuple) -> bool:
    """``text in choices`` after argparse's ``type`` conversion (int choices come from an ``int`` type)."""
    strings = _STRINGS.get(choices)
    if strings is None:
        strings = _STRINGS.keep(choices, all(isinstance(c, str) for c in choices))
    if strings:
        return text in choices
    try:
        return int(text) in choices
    except ValueError:
        return False


# Whether a choices tuple holds strings only, by the tuple (an option table's: a few dozen; asked for each value of a
# launch, and all() over 30 choices cost a fifth of normalise_argv). Held for the process (kv4lint.base.memo).
_STRINGS = Memo(256)


def normalise_kwargs(kwargs: dict[str, Value], positional: list[Value], *, unknown_rest: bool = False) -> Args:
    """ServerArgs/Engine keyword arguments are field names already (no aliases, no choices check)."""
    args = Args(form="kwargs", open_ended=unknown_rest)
    if positional:
        kwargs = {"model_path": positional[0], **kwargs}
    for name, value in kwargs.items():
        args.values[name] = value
        args.occurrences[name] = [Occurrence(value, [value], spelled=name)]
    return args


def unprefixed(tokens: list[Value], prefix: str) -> list[Value]:
    """The server arguments of a trainer that passes them prefixed (``--sglang-kv-cache-dtype nvfp4`` ->
    ``--kv-cache-dtype nvfp4``): each prefixed option, renamed where it is written, with the words after it up to
    the next option; the trainer's own options and their values are left out. An unknown word is kept (it may be
    anything, so the launch stays open-ended)."""
    out: list[Value] = []
    keep = False
    for t in tokens:
        text = t.text
        if text is not None and text.startswith("-"):
            keep = text.startswith(prefix) and len(text) > len(prefix)
            if keep:
                out.append(Value("--" + text[len(prefix):], None, t.provenance, use=t.anchor, shared=t.shared))
            continue
        if keep or text is None:
            out.append(t)
    return out


def hydra_kwargs(tokens: list[Value], key: str) -> tuple[dict[str, Value], bool]:
    """The engine's keyword arguments among Hydra overrides (``+KEYfield=value``), each value a part of its word
    (so a fix edits it where it is written), and whether an unknown word may add more.  An unknown word
    (``"$@"``) may override the values before it: they become unknown, as an option before ``"$@"`` does."""
    kwargs: dict[str, Value] = {}
    unknown = False
    for t in tokens:
        text = t.text
        if text is None:  # it may override any of the values before it (Hydra: the last one wins)
            unknown = True
            kwargs = {k: Value.unknown(v.anchor) for k, v in kwargs.items()}
            continue
        bare = text.lstrip("+")
        name, eq, _ = bare.partition("=")
        if eq and name.startswith(key) and name[len(key):].isidentifier():
            kwargs[name[len(key):]] = _sub(t, len(text) - len(bare) + len(name) + 1)
    return kwargs, unknown


def fork_own(tokens: list[Value], patterns: list[str]) -> tuple[list[Value], list[str]]:
    """``tokens`` as kv4lint reads them when ``patterns`` (the ``fork-options`` setting) mark what a fork of SGLang
    adds: each of the fork's options (``--kt-*``) left out with the value after it, as the fork's parser takes it;
    each of its values of a stock option (``--attention-backend=kt_*``) unknown.  Also the words marked, in order."""
    own = [p for p in patterns if "=" not in p]
    values = [tuple(p.split("=", 1)) for p in patterns if "=" in p]
    tbl = table(None)
    out: list[Value] = []
    marked: list[str] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        i += 1
        text = t.text
        if text is None or not _looks_like_option(text, tbl):
            out.append(t)
            continue
        name, eq, inline = text.partition("=")
        if any(fnmatch.fnmatchcase(name, g) for g in own):
            marked.append(name)
            if not eq and i < len(tokens) and tokens[i].text is not None and not tokens[i].splat \
                    and not _looks_like_option(tokens[i].text, tbl):
                i += 1  # its value
            continue
        globs = [v for o, v in values if fnmatch.fnmatchcase(name, o)]
        if eq and any(fnmatch.fnmatchcase(inline, v) for v in globs):
            marked.append(text)
            out += [Value(name, None, t.provenance, use=t.anchor), Value.unknown(t.anchor)]
            continue
        out.append(t)
        nxt = tokens[i] if i < len(tokens) else None
        if not eq and nxt is not None and nxt.text is not None and any(fnmatch.fnmatchcase(nxt.text, v)
                                                                       for v in globs):
            marked.append(f"{name} {nxt.text}")
            out.append(Value.unknown(nxt.anchor))
            i += 1
    return out, marked


def normalise(launch: Launch, version: str | None) -> Args:
    if launch.form == "kwargs":
        return normalise_kwargs(launch.kwargs, launch.positional, unknown_rest=launch.unknown_kwargs)
    key = HYDRA_ENTRIES.get(launch.entry)
    if key is not None:
        kwargs, unknown = hydra_kwargs(launch.argv, key)
        return normalise_kwargs(kwargs, [], unknown_rest=unknown)
    prefix = PREFIXED_ENTRIES.get(launch.entry)
    if prefix is not None:
        return normalise_argv(unprefixed(launch.argv, prefix), version)
    return normalise_argv(launch.argv, version, config=launch.config_argv)


def literal_tokens(words: list[str]) -> list[Value]:
    """Tokens for an argv given as plain strings (the API, tests): no spans."""
    return [Value(w, None, Provenance.LITERAL) for w in words]
