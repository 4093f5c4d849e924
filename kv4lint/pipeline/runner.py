"""The pipeline for one file's text past the pre-filter: frontend -> --config files -> target -> rules ->
findings (suppressions applied).

Used by :mod:`kv4lint.pipeline.read` (a file on disk that passed the pre-filter), the
flake8 plugin, the fix engine and the Python API (:func:`resolve_target`).
Importing it loads the frontends' registry: the cheap stages before it (:mod:`kv4lint.pipeline.read`, the
flake8 plugin's screen) import it only for a file that may launch.  The rules, the target and SGLang's option
tables load with the first launch a frontend finds: most files that pass the pre-filter hold none (a
process of a parallel run that meets only those never loads them).
"""

from __future__ import annotations

import os
from fnmatch import fnmatch

from kv4lint import frontends
from kv4lint.base import internal_error, suppression
from kv4lint.base.file_error import FileError
from kv4lint.base.file_report import FileReport
from kv4lint.base.model import Finding, Launch, ScanResult
from kv4lint.base.process import gc_paused
from kv4lint.base.record import replace
from kv4lint.base.settings import Settings
from kv4lint.base.source import LineIndex
from kv4lint.files.depends import recording
from kv4lint.files.discover import language_of
from kv4lint.files.prefilter import might_launch
from kv4lint.pipeline.sourced import attach_sourced

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kv4lint.rules.check import RuleFinding
    from kv4lint.sglang.options import Args
    from kv4lint.target import Target

# The stages after a frontend found a launch (the --config files, the target, the rules, the fixes) are imported
# where they are used: with the first launch, not with this module (tests/test_startup.py).


# ---------------------------------------------------------------------------


def lint_text(path: str, text: str, settings: Settings, language: str | None = None, *,
              flake8_noqa: bool = False, fingerprints: bool = True) -> FileReport:
    """Lint one file's decoded text.

    ``flake8_noqa``: skip a Python file that flake8 skips for its ``# flake8: noqa`` line, as kv4lint's own
    command does so that it agrees with the flake8 plugin (under flake8, flake8 decides before the plugin runs).
    ``fingerprints``: give each finding its :func:`fingerprint` (SARIF's, GitLab's); a caller that shows none
    (the flake8 plugin) leaves them None, and hashlib unloaded (2.5 ms to import).
    """
    language = language or language_of(path, text[:256].encode("utf-8", "replace")) or "shell"
    if not might_launch(text, language):
        return FileReport(path, language)
    if flake8_noqa and language == "python" and suppression.flake8_skips_file(text):
        return FileReport(path, language)
    # the files the report reads (kv4lint.pipeline.cache.FileIndex)
    with recording() as looked_at, gc_paused():
        rep = _lint_text(path, text, settings, language, fingerprints)
    rep.depends = list(dict.fromkeys(looked_at))
    return rep


def _lint_text(path: str, text: str, settings: Settings, language: str, fingerprints: bool = True) -> FileReport:
    rep = FileReport(path, language)
    try:
        if settings.cache_dir:
            from kv4lint.pipeline.cache import cached_scan  # off with --no-cache and in the flake8 plugin

            scan = cached_scan(settings.cache_dir, path, text, language, frontends.scan)
        else:
            scan = frontends.scan(path, text, language)
    except RecursionError:
        rep.errors.append(FileError(path, "too deeply nested to scan"))
        return rep
    except Exception as e:  # a frontend bug must not stop the run
        rep.errors.append(internal_error.scan_error(path, "while scanning", e))
        return rep
    try:
        scan = attach_sourced(scan, path, text, language)  # settings from files the script sources
    except Exception as e:  # a sourced file's problem must not stop the run
        rep.errors.append(internal_error.scan_error(path, "while reading the settings files it refers to", e))
    if scan.launches:
        from kv4lint.pipeline.launch_configs import attach_configs

        try:
            attach_configs(scan, path)  # the --config files launches name: read after the cache, on every run
        except Exception as e:  # a config file problem must not stop the run
            rep.errors.append(FileError(path, f"could not read a --config file ({type(e).__name__}: {e})"))
    rep.errors.extend(scan.errors)
    rep.launches = len(scan.launches)
    if not scan.launches:
        return rep
    from kv4lint.frontends.hints import dedupe_hints, path_hints
    from kv4lint.rules.parser import dummy_model, judge
    from kv4lint.sglang.options import fork_own

    named = path_hints(path)  # the file's and its folders' names: evidence the parse cache does not key on
    if named:
        for launch in scan.launches:
            launch.hints = dedupe_hints(list(launch.hints) + named)
    index = LineIndex(text)
    base_dir = os.path.dirname(os.path.abspath(path)) if path and not path.startswith("<") else None
    per_launch: list[tuple[Launch, list[Finding]]] = []
    for launch in scan.launches:
        line = index.line(launch.anchor.start)
        if launch.not_judged is not None:  # a negative test: the code expects SGLang to refuse it
            rep.targets.append({"line": line, "entry": launch.entry, "not_judged": launch.not_judged})
            continue
        forks: list[str] = []
        if settings.fork_options and launch.form == "argv":  # what the fork adds: not SGLang's to judge
            argv, forks = fork_own(launch.argv, settings.fork_options)
            config_argv, more = fork_own(launch.config_argv, settings.fork_options)
            launch, forks = replace(launch, argv=argv, config_argv=config_argv), forks + more
        target, args = resolve_target(launch, settings, base_dir=base_dir, index=index)
        rep.targets.append({"line": line, "entry": launch.entry,
                            **({"when": launch.condition} if launch.condition else {}), **target.describe()})
        notes = [dummy_model(args)] + ([f"the fork's own ({settings.sources.get('fork_options', 'fork-options')}), "
                                        f"not judged: {', '.join(forks)}"] if forks else [])
        if any(notes):
            rep.targets[-1]["note"] = "; ".join(n for n in notes if n)
        found = []
        identity = None  # hashed for the launch's first finding (hashlib: 3 ms to import)
        for rf in judge(launch, args, target, fix_dtype=settings.fix_dtype, strict=settings.strict):
            f = _to_finding(rf, launch, args, path, index)
            f.target = target.describe()
            if fingerprints:
                if identity is None:
                    identity = launch_identity(text[launch.span.start:launch.span.end])
                f.fingerprint = fingerprint(f, identity)
            if f.span is not None:
                f.cell = frontends.cell_position(language, text, f.span.start)
            if _suppressed(f, launch, scan, index, language, settings):
                continue
            found.append(f)
        per_launch.append((launch, found))
    rep.findings = _dedupe(_with_conditions(per_launch))
    return rep


def _with_conditions(per_launch: list[tuple[Launch, list[Finding]]]) -> list[Finding]:
    """Findings of launches that run only on some paths of the script, their message naming the condition
    (and, in a structured file, their detail naming the launch's location: a JSON path).

    A command whose values differ between paths is one Launch per path (each with its ``condition``). One cause
    is one finding: a finding several paths share is reported once, and one every path has holds for every run
    and names none. The condition names only what decides the finding (:func:`kv4lint.base.conditions.decisive`):
    of six knobs that each add an option, ``when FP4=1``, not every knob of the readings that have it.
    """
    from kv4lint.base.conditions import decisive
    from kv4lint.rules.codes.base import join_sentences

    readings: dict[tuple, list[str]] = {}
    conditions: dict[tuple, list[str]] = {}
    for launch, found in per_launch:
        if launch.condition is not None:
            command = (launch.span, launch.anchor)
            readings.setdefault(command, []).append(launch.condition)
            for f in found:
                conditions.setdefault((command, f.code, f.span, f.message), []).append(launch.condition)
    out = []
    for launch, found in per_launch:
        for f in found:
            if launch.condition is not None:
                key = ((launch.span, launch.anchor), f.code, f.span, f.message)
                when = conditions.pop(key, None)
                if when is None:
                    continue  # reported with the first path that has it
                every = readings[key[0]]
                misses = list(every)
                for c in when:
                    misses.remove(c)
                condition = decisive(when, misses)
                if condition is not None:
                    f.message = f"when {_brief(condition)}: {f.message}"
                    if _brief(condition) != condition:  # the whole condition, in the detail
                        f.detail = join_sentences(f"The launch runs when {condition}", f.detail or "")
            if launch.location is not None:  # the span says where; the detail names the launch's path too
                f.detail = join_sentences(f"The launch at {launch.location}", f.detail or "")
            out.append(f)
    return out


MAX_CONDITION = 40  # characters of a launch's condition in the headline; the detail has it whole


def _brief(condition: str) -> str:
    """``condition`` as the headline shows it: whole up to :data:`MAX_CONDITION` characters, else cut at a word
    boundary outside backtick spans and marked ``...``."""
    from kv4lint.base.conditions import brief

    return brief(condition, MAX_CONDITION)


def _to_finding(rf: RuleFinding, launch: Launch, args: Args, path: str, index: LineIndex) -> Finding:
    span = None
    if rf.value is not None:
        span = rf.value.anchor
    if span is None:
        span = launch.anchor
    from kv4lint.fixes.edits import plan

    fix = plan(rf.fix, args, launch) if rf.fix is not None else None
    return Finding(rf.code, rf.severity, rf.message, path, span, index.position(span.start),
                   index.position(span.end), fix, field=rf.field, detail=rf.detail or None)


def launch_identity(launch_text: str) -> str:
    """The launch's text with blanks collapsed, hashed: computed once per launch (a launch of 10,000
    options has as many findings)."""
    import hashlib

    return hashlib.sha256(" ".join(launch_text.split()).encode("utf-8", "surrogatepass")).hexdigest()


def fingerprint(f: Finding, identity: str) -> str:
    """A finding's identity that survives lines moving: its code, field and the launch's identity
    (:func:`launch_identity`), hashed; not its line, column or path."""
    import hashlib

    key = "\0".join((f.code, f.field or "", identity))
    return hashlib.sha256(key.encode("ascii", "surrogatepass")).hexdigest()[:32]


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen = set()
    out = []
    for f in sorted(findings, key=Finding.sort_key):
        key = (f.path, f.start, f.code, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


# ---------------------------------------------------------------------------
# Suppressions

def _codes_match(code: str, codes: frozenset[str] | set[str]) -> bool:
    return suppression.covers(codes, code)


def _suppressed(f: Finding, launch: Launch, scan: ScanResult, index: LineIndex, language: str,
                settings: Settings) -> bool:
    if not settings.enabled(f.code, f.severity.value):  # not selected, ignored, or below --severity
        return True
    if _codes_match(f.code, scan.disabled) or _codes_match(f.code, launch.disabled):
        return True
    for pat, codes in settings.per_file_ignores.items():
        if fnmatch(f.path, pat) or fnmatch(os.path.basename(f.path), pat) or fnmatch(f.path, f"*/{pat}"):
            if any(f.code.startswith(c) for c in codes):
                return True
    line = index.line_text(f.start.line) if f.start else ""
    if language in ("python", "notebook") and f.start:
        # flake8 reads a noqa comment on any line of a multi-line string or call: so does kv4lint.
        last = max(f.start.line, index.line(max(launch.span.start, launch.span.end - 1)))
        for ln in range(f.start.line, min(last, f.start.line + 200) + 1):
            d = suppression.find_noqa(index.line_text(ln))
            if d is not None and suppression.covers(d.codes, f.code):
                return True
    if suppression.covers(suppression.trailing_codes(line), f.code):
        return True
    return False


# ---------------------------------------------------------------------------
# The target: decided by kv4lint.target.resolve, with the release inference of SGLang's parser (the rules')


def resolve_target(launch: Launch, settings: Settings, *, base_dir: str | None = None,
                   index: LineIndex | None = None) -> tuple[Target, Args]:
    """The target ``launch`` is judged against (:func:`kv4lint.target.resolve.resolve`) and its arguments;
    ``index``: the file's lines, to name where the evidence is written."""
    from kv4lint.rules.parser import infer_release
    from kv4lint.target.resolve import resolve

    line_of = index.line if index is not None else None
    # one file's run: its own index (what resolve read of the tree's files is read again in another run)
    return resolve(launch, settings, infer=infer_release, base_dir=base_dir, line_of=line_of, run=index)
