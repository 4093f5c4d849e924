"""SGLang's argument parser comes first: KV408 (a launch the parser refuses) and KV409 (a launch for an
SGLang build kv4lint does not know), and the order in which they and the KV cache rules are reported.

``python -m sglang.launch_server`` and ``sglang serve`` read their arguments with ``argparse``
(``prepare_server_args``; prefixes allowed, exact spellings first).  An option the release does not have,
a value outside an option's choices, an option without its value: argparse exits with status 2 before
any of SGLang's resolution runs, so that is the cause a user hits first (attribution).  The facts (which
options and choices each release has, how argparse reads argv) are :mod:`kv4lint.sglang.options`; here
they become findings.

Pure: (launch, normalised arguments, target) -> findings.  No I/O.
"""

from __future__ import annotations

import json
from operator import attrgetter

from kv4lint.base.memo import Memo
from kv4lint.base.model import Fix, Launch, Value
from kv4lint.base.record import Frozen, fields as record_fields, replace, values as field_values
from kv4lint.rules.check import RuleFinding, check
from kv4lint.rules.codes import RULES
from kv4lint.rules.codes.base import HEADLINE, join_clauses, join_sentences
from kv4lint.rules.codes.kv406 import name_refused
from kv4lint.rules.engine import FP4_NAMES
from kv4lint.sglang.options import (
    Args, Occurrence, Problem, choice_releases, inspected_release, known_releases, kv_cache_dtype_choices, normalise,
    option_releases, table,
)
from kv4lint.sglang.releases import release, version_label
from kv4lint.target import Target

# Entry points whose parser is prepare_server_args's alone (docs/sglang-rules.md §6): every option they are given
# must be one of ServerArgs'.  The bench scripts and compile_deep_gemm add options of their own, which kv4lint's
# tables do not list: there an unknown option is not a refusal kv4lint can see.
SERVER_PARSER_ENTRIES = frozenset({"sglang.launch_server", "sglang serve", "sglang config", "prepare_server_args",
                                   "popen_launch_server", "launch_server_cmd"})

# Options ``sglang serve`` takes out of argv before its parser runs, by the 0.5.N release that added them.
SERVE_OWN_OPTIONS = {"--model-type": 10}

# Fields whose option makes a launch one kv4lint judges (with --config, docs/sglang-rules.md §5.3).
KV_CACHE_FIELDS = frozenset({"kv_cache_dtype", "prefill_kv_cache_dequant_dtype", "speculative_draft_kv_cache_dtype"})


def judged(launch: Launch, args: Args) -> bool:
    """Whether the launch names a KV cache option (or a likeness of one) or a ``--config`` file."""
    if KV_CACHE_FIELDS & set(args.values) or "config" in args.values or launch.config_argv:
        return True
    return any("kv-cache" in p.spelled.lower().replace("_", "-") for p in args.problems)


def refused(launch: Launch, args: Args, version: str | None) -> list[Problem]:
    """The problems of ``args`` the argument parser of release ``version`` refuses, in argv order.

    Nothing when kv4lint has not read that release's parser (older or newer than every inspected one),
    for keyword arguments (the Python API has no parser), and for launches kv4lint does not judge.
    ``--kv-cache-dtype``'s choices are KV406's (it names the FP4 spellings of each release).
    """
    if args.form != "argv" or inspected_release(version) is None or not judged(launch, args):
        return []
    out = []
    for p in args.problems:
        if p.kind in ("unknown", "ambiguous") and launch.entry not in SERVER_PARSER_ENTRIES:
            continue
        if launch.entry == "sglang serve" and release(version) >= SERVE_OWN_OPTIONS.get(p.spelled, 99):
            continue
        if p.kind == "choice" and p.option == "--kv-cache-dtype":
            continue
        out.append(p)
    return out


# A launch longer than this many words is read by the newest release's parser only: inferring its release
# reads it once per release, and so many words are no evidence a shorter launch would not give.
MAX_INFERENCE_WORDS = 2000


class Rejected(Frozen):
    """A word of a launch that a release refuses: ``word`` as quoted (`` `--x` ``, `` `--x value` ``), and,
    when looked up, the releases that have it (``where``; ``nowhere``: none kv4lint knows) and the closest
    option of the release (``near``)."""

    __slots__ = ("word", "where", "near", "nowhere")

    def __init__(self, word: str, where: str = "", near: str = "", nowhere: bool = False) -> None:
        self._set("word", word)
        self._set("where", where)
        self._set("near", near)
        self._set("nowhere", nowhere)

    def __str__(self) -> str:
        notes = [n for n in (self.where, self.near and f"closest: {self.near}") if n]
        return self.word + (f" ({'; '.join(notes)})" if notes else "")


class Inferred:
    """The release a launch whose release was not stated is judged by (``version``; None: a build kv4lint does
    not know, judged by the newest rules), and the evidence: what newer releases refuse, or what no release
    accepts (``evidence``, as phrases; ``rejected``, the words themselves, for a build kv4lint does not know)."""

    __slots__ = ("version", "args", "evidence", "rejected")

    def __init__(self, version: str | None, args: Args, evidence: tuple[str, ...],
                 rejected: tuple[Rejected, ...] = ()) -> None:
        self.version, self.args, self.evidence, self.rejected = version, args, evidence, rejected


def _rejections(launch: Launch, args: Args, version: str, *, suggest: bool = False) -> list[Rejected]:
    """What release ``version`` refuses in the launch as written: its parser's refusals, and a KV cache dtype it
    does not take as written (not a choice, or deprecated). ``suggest``: with the releases that have each word
    and the closest option of that release, where one exists."""
    out = []
    for p in refused(launch, args, version):
        if p.kind == "choice" and p.value is not None:
            found = choice_releases(p.option, p.value.text or "")
            out.append(Rejected(f"`{p.option} {p.value.text}`", _where(found) if suggest else "",
                                nowhere=suggest and not found))
            continue
        looked = suggest and p.kind == "unknown"
        found = option_releases(p.spelled) if looked else []
        # An option of other releases, or a prefix of several options, is no misspelling: no closest one.
        near = _closest(p.spelled, table(version), look=looked and not found)
        out.append(Rejected(f"`{p.spelled}`", _where(found) if looked else "", near, nowhere=looked and not found))
    dv = args.get("kv_cache_dtype")
    if dv is not None and dv.known and dv.text and judged(launch, args) and name_refused(
            dv.text, args.form, version, fp4_name=True) is not None and (
            args.form == "argv" or choice_releases("--kv-cache-dtype", dv.text)):
        out.append(Rejected(f"`--kv-cache-dtype {dv.text}`" if args.form == "argv" else
                            f"`kv_cache_dtype={dv.text!r}`"))
    return list(dict.fromkeys(out))


def infer_release(launch: Launch, newest_args: Args, *, upto: str | None = None) -> Inferred:
    """The newest release kv4lint knows that accepts every option and value of ``launch`` (its options are
    evidence of the release it was written for); a build kv4lint does not know where none accepts them all.

    ``newest_args`` is the launch read by the newest release's parser (``upto``'s, when given: no release after
    it counts, as for a nightly built before it).  A launch kv4lint does not judge (no KV cache option) is judged
    by the newest release: nothing of it depends on the release.

    The same words inferred again (a file that repeats a launch) are read from :data:`_INFERRED`.
    """
    key = (_launch_words(launch), upto)
    hit = _INFERRED.get(key)
    if hit is None:
        found = _inferred(launch, newest_args, upto)
        read_by = None if found.args is newest_args else found.version  # the args: newest_args, or found's
        _INFERRED.keep(key, (found.version, read_by, found.evidence, found.rejected))
        return found
    version, read_by, evidence, rejected = hit
    return Inferred(version, newest_args if read_by is None else normalise(launch, read_by), evidence, rejected)


# What infer_release found, by everything it reads: the launch's words as the parser reads them (each value's text and
# whether it may expand to several: :func:`_launch_words`) and the newest release that counts (``newest_args`` is the
# launch read by that release's parser); the release the arguments were read by, never the arguments themselves
# (they are the launch's own Values: read again by that release). Held for the process (kv4lint.base.memo).
_INFERRED = Memo(1024)


def _inferred(launch: Launch, newest_args: Args, upto: str | None) -> Inferred:
    releases = known_releases()
    if upto is not None:
        releases = releases[:releases.index(upto) + 1]
    newest = releases[-1]
    first = _rejections(launch, newest_args, newest)
    if not first:
        return Inferred(upto, newest_args, ())
    if len(launch.argv) + len(launch.config_argv) > MAX_INFERENCE_WORDS:
        return Inferred(None, newest_args, tuple(map(str, first)), tuple(first))
    last: dict[str, str] = {}  # each word newest refuses -> the newest release that takes it
    for r in reversed(releases[:-1]):
        args = normalise(launch, r)
        rejected = _rejections(launch, args, r)
        for w in first:
            if w not in rejected:
                last.setdefault(w, r)
        if not rejected:
            return Inferred(r, args, tuple(f"{w}: last taken by {last[w]}" for w in first))
    rejected = tuple(_rejections(launch, newest_args, newest, suggest=True))
    return Inferred(None, newest_args, tuple(map(str, rejected)), rejected)


def _ranges(releases: list[str]) -> str:
    """``["0.5.12", "0.5.13", "0.5.16"]`` -> ``0.5.12-0.5.13, 0.5.16`` (runs of consecutive inspected releases)."""
    known = known_releases()
    runs: list[list[str]] = []
    for r in releases:
        if runs and known.index(r) == known.index(runs[-1][-1]) + 1:
            runs[-1].append(r)
        else:
            runs.append([r])
    return ", ".join(run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def _where(found: list[str]) -> str:
    return "it exists in no release kv4lint knows" if not found else f"it exists in SGLang {_ranges(found)}"


# Close matches are looked for in the first refusals of a launch only: difflib costs about 5 ms a word.
MAX_SUGGESTIONS = 50


def _closest(word: str, candidates, *, look: bool = True) -> str:
    """The candidate closest to ``word`` ("" when none is close, or ``look`` is false); never the opposite
    switch: `--enable-radix-cache` is no misspelling of `--disable-radix-cache`."""
    if not look:
        return ""
    opposite = {word.replace("--enable-", "--disable-", 1), word.replace("--disable-", "--enable-", 1)} - {word}
    import difflib  # 'did you mean': a refused word only

    near = difflib.get_close_matches(word, [c for c in candidates if c not in opposite], n=1, cutoff=0.75)
    return near[0] if near else ""


def _suggest(word: str, candidates, *, look: bool = True) -> str:
    near = _closest(word, candidates, look=look)
    return f"did you mean `{near}`?" if near else ""


def _quote(tokens) -> str:
    return " ".join(t.text if t.text is not None else "<unknown>" for t in tokens)


def _named(p: Problem, launch: Launch) -> str:
    """The option as the user wrote it: a config file's key, or the option on the command line."""
    if (p.from_config or launch.entry == "sglang config") and p.spelled.startswith("--"):
        return f"config key `{p.spelled[2:]}`"
    return f"`{p.spelled}`"


def describe(p: Problem, target: Target, launch: Launch, *, suggest: bool = True) -> tuple[str, Value, str]:
    """A refusal in the user's terms: the headline (the option, the cause, the one fix), the token to report it
    at, and the detail (the parser's own words, the releases that have the option, the choices). ``suggest``:
    with the nearest option or choice."""
    label = version_label(target.sglang_version)
    tbl = table(target.sglang_version)
    refuses = "Its argument parser refuses the launch before the server starts"
    if p.kind == "unknown":
        spelled = p.spelled
        dashed = spelled.replace("_", "-") if spelled.startswith("--") else spelled
        hint = (f"did you mean `{dashed}`?" if dashed != spelled and dashed in tbl
                else _suggest(spelled, tbl, look=suggest))
        found = option_releases(spelled)
        advice = hint or ("set --sglang-version to its release" if found else "remove it")
        return (join_clauses(f"{_named(p, launch)} is not an option of {label}", advice), p.token,
                join_sentences(f"{refuses}: unrecognized arguments: {_quote((p.token,) + p.swallowed)}",
                               _where(found).capitalize()))
    if p.kind == "ambiguous":
        exact = option_releases(p.spelled)
        was = f"`{p.spelled}` itself is an option of SGLang {_ranges(exact)}" if exact else ""
        return (join_clauses(f"{_named(p, launch)} is ambiguous in {label}", "write the option in full"), p.token,
                join_sentences(f"It could be {', '.join(p.candidates)}", f"{refuses}: ambiguous option", was))
    if p.kind == "choice":
        value = p.value.text if p.value is not None else ""
        choices = [str(c) for c in (tbl[p.option].choices or ())]
        hint = _suggest(value, choices, look=suggest)
        return (join_clauses(f"`{p.option} {value}` is not a choice of {label}", hint or "use one of its choices"),
                p.value or p.token,
                join_sentences(f"{refuses}: invalid choice: '{value}' (choose from {', '.join(choices)})",
                               f"As a value of {p.option}, {_where(choice_releases(p.option, value))}"))
    if p.kind == "missing":
        after = "it is the last argument" if p.value is None else f"it is followed by `{p.value.text}`"
        many = tbl[p.option].arity == "list+"
        return (join_clauses(f"{_named(p, launch)} needs {'at least one value' if many else 'a value'} in {label}, "
                             f"but {after}", "give it its value"), p.token,
                f"{refuses}: expected {'at least one argument' if many else 'one argument'}.")
    if p.kind == "explicit":
        value = p.value.text if p.value is not None else ""
        return (join_clauses(f"{_named(p, launch)} takes no value in {label}", f"remove `={value}`"), p.token,
                f"{refuses}: `{p.token.text}` (ignored explicit argument '{value}').")
    return (join_clauses(f"{_named(p, launch)} is retired in {label}", "remove it"), p.token,
            "Its argument parser stops with an error when it is given.")


def parser_findings(launch: Launch, args: Args, target: Target) -> list[RuleFinding]:
    """KV408, one per refusal."""
    out = []
    for k, p in enumerate(refused(launch, args, target.sglang_version)):
        msg, token, detail = describe(p, target, launch, suggest=k < MAX_SUGGESTIONS)
        out.append(RuleFinding("KV408", RULES["KV408"].severity, msg, token, p.option and table(
            target.sglang_version)[p.option].dest, detail=detail))
    return out


def build_decides(args: Args, target: Target) -> bool:
    """Whether the KV4 verdict of a launch depends on the build that runs it: an FP4 KV cache dtype (any
    release's spelling), a dtype no release has (the build's own, which may be FP4), the NVFP4 prefill option, or a
    word no release takes that names the KV cache.  A fork's launch with a bf16 or fp8 KV cache has no KV4 verdict
    on any build: no KV409 for it."""
    dv = args.get("kv_cache_dtype")
    if dv is not None and dv.known and dv.text and (
            dv.text in FP4_NAMES or not choice_releases("--kv-cache-dtype", dv.text)):
        return True
    dq = args.get("prefill_kv_cache_dequant_dtype")
    if dq is not None and dq.text != "auto":
        return True
    return any("kv-cache" in w.word.lower().replace("_", "-") for w in target.build_words)


def fork_globs(words) -> list[str]:
    """The ``fork-options`` globs that mark the words no release has as a fork's own: an option by its first part
    (``--kt-*``) when no release has an option that starts so, else by its name; a value as ``--option=value``."""
    out: list[str] = []
    for w in words:
        spelled = w.word.strip("`")
        if " " in spelled:  # ``--attention-backend kt_flash``: a value of a stock option
            out.append("=".join(spelled.split(" ", 1)))
            continue
        head = spelled[:spelled.find("-", 2) + 1] if spelled.find("-", 2) > 2 else ""
        stock = head and any(o.startswith(head) for r in known_releases() for o in table(r))
        out.append(f"{head}*" if head and not stock else spelled)
    return list(dict.fromkeys(out))


def build_finding(launch: Launch, args: Args, target: Target) -> RuleFinding | None:
    """KV409, once per judged launch whose release was inferred, that shows another build, and whose KV4 verdict
    that build decides (:func:`build_decides`)."""
    if not (target.version_inferred and target.build_evidence and args.form == "argv" and judged(launch, args)
            and build_decides(args, target)):
        return None
    label = version_label(target.sglang_version)
    evidence = target.build_evidence
    first = evidence[0].split(" (", 1)[0]  # ``image lmsysorg/sglang:dev``, without its explanation
    # The word no release has names the build best, else the first word a release refuses.
    nowhere = next((w for w in target.build_words if w.nowhere), None)
    word = (nowhere or target.build_words[0]).word if target.build_words else None
    # Words no release has are a fork's own: stating a stock release would report each as refused (KV408), so the
    # advice is to mark them; a misspelling (a close option exists) is fixed by its spelling instead.
    forks = fork_globs(w for w in target.build_words if w.nowhere and not w.near)
    toml = f"fork-options = [{', '.join(json.dumps(g) for g in forks)}]"
    advice = "set fork-options" if forks else "set --sglang-version"
    heads = [join_clauses(f"launch for an unknown SGLang build ({first})", advice)]
    if nowhere and nowhere.near:  # in no release at all: most likely misspelt, and the closest one is the fix
        heads.append(f"{word} is in no SGLang release kv4lint knows; did you mean {nowhere.near}?")
    if word:
        if forks:
            heads.append(join_clauses(f"launch for an unknown SGLang build ({word})", f"set {toml}"))
        heads.append(join_clauses(f"launch for an unknown SGLang build ({word})", advice))
    elif " (" in evidence[0]:  # ``image IMAGE (a nightly of DAY, newer than ...)``: its explanation, cut short
        why = evidence[0].split(" (", 1)[1].split(",")[0].rstrip(")")
        heads.append(join_clauses(f"launch for an unknown SGLang build ({why})", advice))
    msg = next((h for h in heads if len(h) <= HEADLINE),
               join_clauses("launch for an unknown SGLang build", advice))
    which = "the newest release that takes its options" if target.sglang_version else "the newest kv4lint knows"
    state = ("Mark what the fork adds as its own with " + toml + " in [tool.kv4lint] (or --fork-options), and state "
             "the SGLang release it is based on with --sglang-version: a release stated alone would report each of "
             "them as refused (KV408)") if forks else \
        "State the release with --sglang-version, or sglang-version in [tool.kv4lint]"
    detail = join_sentences(f"Evidence: {'; '.join(evidence)}",
                            f"No release was stated, so it is judged by {label}, {which}, and what is reported holds "
                            "for that release, not necessarily for the build", state)
    # Reported at the first word no release takes (an image tag or a source install: at the launch).
    at = next((p.token for p in refused(launch, args, target.sglang_version) if f"`{p.spelled}`" == word), None)
    return RuleFinding("KV409", RULES["KV409"].severity, msg, at, None, detail=detail)


# ---------------------------------------------------------------------------
# Attribution and fixes


def _as_if_accepted(args: Args, problems: list[Problem], target: Target) -> Args:
    """``args`` once the parser errors are put right, as far as kv4lint can tell: an unknown option gone
    (as normalisation already reads it), a refused or missing value unknown, and so are the options an
    ambiguous prefix may mean (the user's correction is not known)."""
    values = dict(args.values)
    tbl = table(target.sglang_version)
    for p in problems:
        if p.kind == "ambiguous":
            for c in p.candidates:
                values.setdefault(tbl[c].dest, Value.unknown(p.token.anchor))
            continue
        dest = _dest(args, p)
        if dest is not None:
            values[dest] = Value.unknown(p.token.anchor)
    return replace(args, values=values)


def _dest(args: Args, p: Problem) -> str | None:
    """The field whose effective (last) occurrence is the refused one."""
    for dest, occs in args.occurrences.items():
        if occs and occs[-1].option is p.token:
            return dest
    return None


def _fixed_tokens(tokens: list[Value], args: Args, fix: Fix) -> list[Value]:
    drop: set[int] = set()
    replace_text: dict[int, str] = {}
    for name in fix.remove:
        for occ in args.occurrences.get(name, []):
            drop.add(id(occ.option))
            if not occ.inline:
                drop.update(id(v) for v in occ.values)
    for name, new in fix.set.items():
        occs = args.occurrences.get(name)
        if occs and occs[-1].values and not occs[-1].inline:
            replace_text[id(occs[-1].values[0])] = new
        elif occs and occs[-1].inline:
            replace_text[id(occs[-1].option)] = f"{occs[-1].spelled}={new}"
    out = []
    for t in tokens:
        if id(t) in drop:
            continue
        out.append(replace(t, text=replace_text[id(t)]) if id(t) in replace_text else t)
    return out


def recheck_fix(fix: Fix | None, launch: Launch, args: Args, target: Target) -> Fix | None:
    """Re-check the fixed launch with the same target, its parser included: a fix after which SGLang's
    parser still refuses the launch cannot produce an accepted launch, so it is not safe."""
    if fix is None or args.form != "argv":
        return fix
    fixed = normalise(replace(launch, argv=_fixed_tokens(launch.argv, args, fix),
                              config_argv=_fixed_tokens(launch.config_argv, args, fix)),
                      target.sglang_version)
    left = refused(launch, fixed, target.sglang_version)
    dtype = fix.set.get("kv_cache_dtype")
    why = None
    if left:
        why = describe(left[0], target, launch, suggest=False)[0]
    elif dtype is not None and inspected_release(target.sglang_version) is not None and dtype not in (
            table(target.sglang_version)["--kv-cache-dtype"].choices or ()):
        why = f"--kv-cache-dtype {dtype} is not a choice of {version_label(target.sglang_version)}"
    if why is None:
        return fix
    more = f" and {len(left) - 1} more" if len(left) > 1 else ""
    return replace(fix, applicability="unsafe",
                   description=f"{fix.description} (unsafe: {version_label(target.sglang_version)}'s argument "
                               f"parser would still refuse the fixed launch: {why}{more})")


def dummy_model(args: Args) -> str | None:
    """What ``--show-target`` says of a launch whose model path is ``dummy`` or ``none``, which SGLang treats as
    no model (every release kv4lint knows: ``ServerArgs.__post_init__``, later the resolution pipeline, returns
    before any KV cache check, and no model runner starts); None for any other model path."""
    mp = args.get("model_path")
    if mp is None or not mp.known or (mp.text or "").lower() not in ("none", "dummy"):
        return None
    return (f"model path {mp.text!r}: SGLang skips its argument resolution and loads no model, so only its "
            "argument parser's refusals are judged")


def judge(launch: Launch, args: Args, target: Target, *, fix_dtype: str = "fp8_e4m3",
          strict: bool | None = None) -> list[RuleFinding]:
    """Every finding of a launch, parser first: KV408 refusals, KV409 once, then the KV cache rules on the
    launch as it would be once the parser accepts it, each fix re-checked.

    A release kv4lint inferred (none was stated) takes every option and value of the launch, or none does and
    the launch is for a build kv4lint does not know (KV409): either way no parser refusal (KV408) or dtype
    name (KV406) is claimed for it.

    The same launch judged again (a file that repeats it) is read from :data:`_JUDGED`.
    """
    tokens = _Tokens()
    try:
        key = _judge_key(launch, args, target, fix_dtype, strict, tokens)
        hit = _JUDGED.get(key)
    except TypeError:  # a part that is no key (a list in a record): judged without the memo
        return _judge(launch, args, target, fix_dtype=fix_dtype, strict=strict)
    if hit is not None:
        return [RuleFinding(**dict(rest, value=None if at is None else tokens.values[at])) for at, rest in hit]
    found = _judge(launch, args, target, fix_dtype=fix_dtype, strict=strict)
    kept = tokens.recipe(found)
    if kept is not None:
        _JUDGED.keep(key, kept)
    return found


# What judge found, by everything it reads: the words of the launch and of its arguments (each Value's text and
# whether it may expand to several, numbered by identity in the order met: which record is which), the target and
# the settings; each finding with the number of the Value it is reported at, its other fields as they are. The rules
# read nothing else of a Value: where it is written decides only where a finding is reported (a finding reported at
# a Value the rules made is not kept). The same launch, in a file that repeats it, is judged once. Held for the
# process (kv4lint.base.memo).
_JUDGED = Memo(1024)


class _Tokens:
    """The Value records of one judgement, numbered by identity (:func:`_judge_key`): the launch's own by their first
    position in it, any other in the order met after them."""

    __slots__ = ("at", "values")

    def __init__(self) -> None:
        self.at: dict[int, int] = {}
        self.values: list[Value] = []

    def launch(self, launch: Launch) -> tuple:
        """Number the launch's Values (argv, config_argv, positional, kwargs, in that order), and say how they lie:
        how many of each, the keywords, and which are one record (None: each its own, as is usual)."""
        values = self.values
        values += launch.argv
        values += launch.config_argv
        values += launch.positional
        values += launch.kwargs.values()
        n = len(values)
        at = self.at
        at.update(zip(map(id, reversed(values)), range(n - 1, -1, -1)))  # (the first position of each record)
        return (len(launch.argv), len(launch.config_argv), len(launch.positional), tuple(launch.kwargs),
                None if len(at) == n else tuple([at[id(v)] for v in values]))

    def ref(self, v: Value | None) -> int | None:
        if v is None:
            return None
        i = self.at.get(id(v))
        if i is None:
            i = self.at[id(v)] = len(self.values)
            self.values.append(v)
        return i

    def shape(self, record) -> tuple:
        """A record's fields (a Problem: every field), each Value (or tuple or list of them) as its number."""
        ref = self.ref
        out = []
        for x in field_values(record):  # by exact type, asked for every judgement (a subclass would be kept as is)
            t = type(x)
            if t is Value:
                x = ref(x)
            elif t is list or t is tuple:
                x = tuple([ref(y) if type(y) is Value else y for y in x])
            out.append(x)
        return tuple(out)

    def occurrence(self, occ: Occurrence) -> tuple:
        """An Occurrence's fields, as :meth:`shape` gives them (a launch has several: written out, a third of the
        time; tests/test_judged_memo.py checks that it reads every field)."""
        ref = self.ref
        option, values, inline, spelled, from_config = _OCCURRENCE(occ)
        return ref(option), tuple(map(ref, values)), inline, spelled, from_config

    def recipe(self, found: list[RuleFinding]) -> tuple | None:
        """``found``, each finding's Value as its number; None when one is none of these."""
        out = []
        for f in found:
            at = None
            if f.value is not None:
                at = self.at.get(id(f.value))
                if at is None:
                    return None
            out.append((at, {n: getattr(f, n) for n in _FINDING_FIELDS}))
        return tuple(out)


_FINDING_FIELDS = tuple(f for f in record_fields(RuleFinding) if f != "value")
_OCCURRENCE = attrgetter("option", "values", "inline", "spelled", "from_config")
_TEXT, _SPLAT = attrgetter("text"), attrgetter("splat")


def _judge_key(launch: Launch, args: Args, target: Target, fix_dtype: str, strict: bool | None,
               tokens: _Tokens) -> tuple:
    """The key of :data:`_JUDGED`; numbers the Values of ``launch`` and ``args`` in ``tokens``. Built for every
    launch judged: with as few Python calls per word as will do."""
    ref, occurrence = tokens.ref, tokens.occurrence
    key = (launch.form, launch.entry, launch.unknown_kwargs, tokens.launch(launch),
           args.form, args.open_ended, tuple([(k, ref(v)) for k, v in args.values.items()]),
           tuple([(k, tuple(map(occurrence, occs))) for k, occs in args.occurrences.items()]),
           tuple(map(tokens.shape, args.problems)))
    values = tokens.values  # (every Value now numbered: their words)
    return key + (tuple(map(_TEXT, values)), tuple(map(_SPLAT, values)), _target_key(target), fix_dtype, strict)


def _judge(launch: Launch, args: Args, target: Target, *, fix_dtype: str, strict: bool | None) -> list[RuleFinding]:
    problems = [] if target.version_inferred else refused(launch, args, target.sglang_version)
    out = parser_findings(launch, args, target) if problems else []
    if target.version_inferred and target.sglang_version is None:
        # A build kv4lint does not know: what it does with a value no release takes is unknown, not refused.
        values = [p for p in refused(launch, args, None) if p.kind == "choice"]
        args = _as_if_accepted(args, values, target) if values else args
    if dummy_model(args) is not None:  # no resolution runs: only what the parser refuses (a dtype not a choice)
        dv = args.get("kv_cache_dtype")
        if args.form == "argv" and not target.version_inferred and dv is not None and dv.known \
                and inspected_release(target.sglang_version) is not None \
                and dv.text not in kv_cache_dtype_choices(target.sglang_version):
            out += [f for f in check(args, target, fix_dtype=fix_dtype, strict=strict) if f.code == "KV406"]
        return out
    build = build_finding(launch, args, target)
    if build is not None:
        out.append(build)
    found = _checked(launch, args, problems, target, fix_dtype, strict)
    if target.version_inferred and (target.sglang_version or not target.build_evidence) and found:
        since = _since(launch, target, found, fix_dtype, strict)
        if since:  # judged again, the headlines naming the releases
            found = _checked(launch, args, problems, target.with_(verdict_since=since), fix_dtype, strict)
    return out + found


def _checked(launch: Launch, args: Args, problems: list[Problem], target: Target, fix_dtype: str,
             strict: bool | None) -> list[RuleFinding]:
    """The KV cache rules' findings on the launch as it would be once the parser accepts it, each fix re-checked."""
    found = []
    for f in check(_as_if_accepted(args, problems, target) if problems else args, target, fix_dtype=fix_dtype,
                   strict=strict):
        if target.version_inferred and (target.sglang_version or target.build_evidence) and f.code == "KV406" \
                and f.event is None:
            continue  # the dtype's name: the build it was written for may take it
        if f.fix is not None:
            f.fix = recheck_fix(f.fix, launch, args, target)
        found.append(f)
    return found


def _key(f: RuleFinding) -> tuple:
    """A finding's verdict, release to release: its code and severity. Not its field: a release may report the
    same refusal at another token (0.5.20 at the dtype, 0.5.21 at the backend), and that is no change of verdict."""
    return f.code, f.severity.value


# What _since found, by everything it reads: the launch's words as the parser reads them (their text, and whether
# each may expand to several), the target but where its parts are written (Target.sources: a headline's and a
# detail's words, never a finding's code or severity), the keys of the verdict and the settings. The same launch, in
# a file that repeats it, is judged by every older release once, wherever its GPU is named. Held for the process
# (kv4lint.base.memo).
_SINCE = Memo(1024)


def _words(values) -> tuple:
    return tuple((v.text, v.splat) for v in values)


def _since_key(launch: Launch, target: Target, found: list[RuleFinding], fix_dtype: str, strict: bool | None):
    """The key of :data:`_SINCE`: what :func:`normalise`, :func:`_rejections` and :func:`check` read of a launch and
    its target for a finding's code and severity (each value's text, whether it is a splat; never where it is
    written, nor where the target's parts are: that decides only where a finding is reported and what its words
    quote, and _since keeps no finding)."""
    return (_launch_words(launch), _target_key(target.with_(sources={})), tuple(_key(f) for f in found), fix_dtype,
            strict)


def _launch_words(launch: Launch) -> tuple:
    """What :func:`normalise` and :func:`_rejections` read of a launch: its form and entry point, and each value's
    text and whether it may expand to several (never where it is written)."""
    return (launch.form, launch.entry, _words(launch.argv), _words(launch.config_argv), _words(launch.positional),
            tuple((k, v.text, v.splat) for k, v in launch.kwargs.items()), launch.unknown_kwargs)


def _target_key(target: Target) -> tuple:
    return tuple(tuple(sorted(v.items())) if isinstance(v, dict) else v for v in field_values(target))


def _since(launch: Launch, target: Target, found: list[RuleFinding], fix_dtype: str,
           strict: bool | None) -> tuple:
    """:func:`_judged_since`, read from :data:`_SINCE` when the same launch was judged so before."""
    key = _since_key(launch, target, found, fix_dtype, strict)
    try:
        hit = _SINCE.get(key)
    except TypeError:  # a part that is no key (a list in a record): judged without the memo
        return _judged_since(launch, target, found, fix_dtype, strict)
    if hit is None:
        hit = _SINCE.keep(key, _judged_since(launch, target, found, fix_dtype, strict))
    return hit


def _judged_since(launch: Launch, target: Target, found: list[RuleFinding], fix_dtype: str,
                  strict: bool | None) -> tuple:
    """A launch whose release was inferred is judged by the newest release that takes its options; where an older
    one that takes them too judges it otherwise, the verdict depends on the release. For each such finding: its
    key (code, severity), the first release it holds for, and the older releases that take the launch
    (``Target.verdict_since``)."""
    releases = known_releases()
    judged_by = target.sglang_version or releases[-1]  # None: the newest takes the launch
    since = {_key(f): judged_by for f in found}
    open_ = set(since)
    last_taken = judged_by  # the oldest release that takes every option and value of the launch
    for r in reversed(releases[:releases.index(judged_by)]):
        args = normalise(launch, r)
        if _rejections(launch, args, r):
            break  # r does not take the launch: neither does it count, nor anything older
        last_taken = r
        if not open_:
            continue  # only how far back the launch is taken is left to know
        held = {_key(g) for g in check(args, target.with_(sglang_version=r), fix_dtype=fix_dtype, strict=strict,
                                       keys_only=True)}
        open_ = {k for k in open_ if k in held}
        since.update((k, r) for k in open_)
    return tuple((k, first, _ranges(releases[releases.index(last_taken):releases.index(first)]))
                 for k, first in since.items() if k not in open_ and first != last_taken)
