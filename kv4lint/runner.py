"""The pipeline for one file's text past the pre-filter: frontend -> --config files -> target -> rules ->
findings (suppressions applied).

Used by :mod:`kv4lint.read` (a file on disk that passed the pre-filter), the
flake8 plugin, the fix engine and the Python API (:func:`resolve_target`).
Importing it loads the frontends' registry, the rules and SGLang's option
tables: the cheap stages before it (:mod:`kv4lint.read`, the flake8 plugin's
screen) import it only for a file that may launch.
"""

from __future__ import annotations

import os
from fnmatch import fnmatch

from kv4lint import frontends, internal_error, suppression
from kv4lint.conditions import brief, decisive
from kv4lint.depends import recording
from kv4lint.discover import language_of
from kv4lint.fix import plan
from kv4lint.launch_configs import attach_configs
from kv4lint.model import FileError, FileReport, Finding, Launch, ScanResult
from kv4lint.prefilter import might_launch
from kv4lint.rules.check import RuleFinding
from kv4lint.rules.codes.base import join_sentences
from kv4lint.rules.parser import Inferred, infer_release, judge
from kv4lint.settings import Settings
from kv4lint.sglang.options import Args, normalise
from kv4lint.sglang.releases import BEYOND_NEWEST_NOTE, NEWEST_LABEL, beyond_newest, nightly_between
from kv4lint.source import LineIndex
from kv4lint.sourced import attach_sourced
from kv4lint.target import ModelInfo, Target, infer_model, normalise_gpu, normalise_platform, parse_version


# ---------------------------------------------------------------------------


def lint_text(path: str, text: str, settings: Settings, language: str | None = None, *,
              flake8_noqa: bool = False) -> FileReport:
    """Lint one file's decoded text.

    ``flake8_noqa``: skip a Python file that flake8 skips for its ``# flake8: noqa`` line, as kv4lint's own
    command does so that it agrees with the flake8 plugin (under flake8, flake8 decides before the plugin runs).
    """
    language = language or language_of(path, text[:256].encode("utf-8", "replace")) or "shell"
    if not might_launch(text, language):
        return FileReport(path, language)
    if flake8_noqa and language == "python" and suppression.flake8_skips_file(text):
        return FileReport(path, language)
    with recording() as looked_at, frontends.gc_paused():  # the files the report reads (kv4lint.cache.FileIndex)
        rep = _lint_text(path, text, settings, language)
    rep.depends = list(dict.fromkeys(looked_at))
    return rep


def _lint_text(path: str, text: str, settings: Settings, language: str) -> FileReport:
    rep = FileReport(path, language)
    try:
        if settings.cache_dir:
            from kv4lint.cache import cached_scan  # off with --no-cache and in the flake8 plugin

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
    try:
        attach_configs(scan, path)  # the --config files launches name: read after the cache, on every run
    except Exception as e:  # a config file problem must not stop the run
        rep.errors.append(FileError(path, f"could not read a --config file ({type(e).__name__}: {e})"))
    rep.errors.extend(scan.errors)
    rep.launches = len(scan.launches)
    if not scan.launches:
        return rep
    index = LineIndex(text)
    base_dir = os.path.dirname(os.path.abspath(path)) if path and not path.startswith("<") else None
    per_launch: list[tuple[Launch, list[Finding]]] = []
    for launch in scan.launches:
        target, args = resolve_target(launch, settings, base_dir=base_dir)
        rep.targets.append({"line": index.position(launch.anchor.start).line, "entry": launch.entry,
                            **({"when": launch.condition} if launch.condition else {}), **target.describe()})
        found = []
        identity = launch_identity(text[launch.span.start:launch.span.end])
        for rf in judge(launch, args, target, fix_dtype=settings.fix_dtype, strict=settings.strict):
            f = _to_finding(rf, launch, args, path, index)
            f.target = target.describe()
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
    and names none. The condition names only what decides the finding (:func:`kv4lint.conditions.decisive`):
    of six knobs that each add an option, ``when FP4=1``, not every knob of the readings that have it.
    """
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
    return brief(condition, MAX_CONDITION)


def _to_finding(rf: RuleFinding, launch: Launch, args: Args, path: str, index: LineIndex) -> Finding:
    span = None
    if rf.value is not None:
        span = rf.value.anchor
    if span is None:
        span = launch.anchor
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
        last = max(f.start.line, index.position(max(launch.span.start, launch.span.end - 1)).line)
        for ln in range(f.start.line, min(last, f.start.line + 200) + 1):
            d = suppression.find_noqa(index.line_text(ln))
            if d is not None and suppression.covers(d.codes, f.code):
                return True
    if suppression.covers(suppression.trailing_codes(line), f.code):
        return True
    return False


# ---------------------------------------------------------------------------
# Target resolution: CLI > config > hints in the launch > the repository > defaults


def resolve_target(launch: Launch, settings: Settings, *, base_dir: str | None = None) -> tuple[Target, Args]:
    sources: dict[str, str] = {}
    hints = {h.kind: h for h in reversed(launch.hints)}  # first hint of each kind wins
    inferred = False

    # SGLang version (needed to read the arguments: options differ per release)
    version = None
    if settings.sglang_version:
        version = settings.sglang_version
        sources["sglang_version"] = settings.sources.get("sglang_version", "--sglang-version")
    elif "sglang_version" in hints:
        version = hints["sglang_version"].value
        sources["sglang_version"] = hints["sglang_version"].reason
    elif settings.repo_sglang_version:
        version = settings.repo_sglang_version
        sources["sglang_version"] = settings.repo_sglang_version_source or "the repository"
    else:
        inferred = True
    if version is not None:
        try:
            if beyond_newest(parse_version(version)):
                sources["sglang_version"] += "; " + BEYOND_NEWEST_NOTE
        except ValueError:
            sources["sglang_version"] += "; not a version, judged by the newest rule pack"
            version = None

    args = normalise(launch, version)
    evidence: tuple[str, ...] = ()
    words: tuple = ()  # the words no release takes together, when none does
    if inferred:
        # Not stated: the launch's own options and values say which release it was written for. A dated nightly
        # image rules out every release after the first one published after its day (it cannot hold their code).
        nightly = hints.get("sglang_nightly")
        before, upto = nightly_between(nightly.value) if nightly else (None, None)
        found = infer_release(launch, normalise(launch, upto) if upto else args, upto=upto)
        version, args = found.version, found.args
        within = ""
        if upto:
            within = (f" up to {upto} ({nightly.reason}: a nightly of {nightly.value}, "
                      f"{f'after {before} and ' if before else ''}before {upto})")
        if version is not None:
            why = f" ({'; '.join(found.evidence)})" if found.evidence else ""
            sources["sglang_version"] = (f"inferred: {version}, the newest release{within} that takes every option "
                                         f"and value of the launch{why}")
        else:
            sources["sglang_version"] = f"not stated: judged by the newest rule pack, {NEWEST_LABEL}"
        evidence = _build_evidence(launch, found, settings, upto)
        words = found.rejected if version is None else ()
        if evidence:
            sources["sglang_version"] += "; evidence of an SGLang build kv4lint does not know: " + "; ".join(evidence)

    # Platform
    platform, reason = None, None
    if settings.platform and settings.platform != "auto":
        platform = normalise_platform(settings.platform)
        reason = settings.sources.get("platform", "--platform")
    elif settings.platform == "auto":
        from kv4lint import platform_detect  # --platform auto only

        det = platform_detect.detect()
        platform, reason = det.platform, det.reason
        if det.arch and not settings.gpu:
            sources["gpu"] = det.reason
    if platform is None:
        dev = args.get("device")
        if dev is not None and dev.known and dev.text:
            try:
                platform = normalise_platform(dev.text.split(":")[0])
                flag = "--device" if args.form == "argv" else "device="
                reason = f"{flag} {dev.text}" if args.form == "argv" else f"device={dev.text!r}"
            except ValueError:
                pass
    if platform is None and "platform" in hints:
        platform, reason = hints["platform"].value, hints["platform"].reason
    if platform is None:
        platform, reason = "cuda", None
        sources["platform"] = "default (cuda)"
    else:
        sources["platform"] = reason or "?"

    # GPU arch
    arch = None
    if settings.gpu:
        arch = normalise_gpu(settings.gpu)
        sources["gpu"] = settings.sources.get("gpu", "--gpu")
    elif settings.platform == "auto":
        arch = det.arch  # detected above
    elif "gpu" in hints:
        arch, sources["gpu"] = hints["gpu"].value, hints["gpu"].reason
    if arch is None:
        sources["gpu"] = "unknown"

    # Model
    mp = args.get("model_path")
    model_path = mp.text if mp is not None and mp.known else None
    model = infer_model(model_path, base_dir=base_dir) if model_path else ModelInfo()
    attention = settings.model_attention
    attention_src = settings.sources.get("model_attention", "--model-attention")
    if model_path:
        for pat, att in settings.model_overrides.items():
            if fnmatch(model_path, pat) or fnmatch(model_path.lower(), pat.lower()):
                attention, attention_src = att, f"model override {pat!r}"
                break
    if attention:
        model = ModelInfo(model.architecture, attention.lower() == "mla", model.dsa, attention_src)
    sources["model_attention"] = model.source if model.mla is not None else "unknown"

    target = Target(platform=platform, arch=arch, model=model, sglang_version=version, strict=settings.strict,
                    sources=sources, platform_reason=reason, version_inferred=inferred, build_evidence=evidence,
                    build_words=words)
    return target, args


def _build_evidence(launch: Launch, found: Inferred, settings: Settings, upto: str | None) -> tuple[str, ...]:
    """What says a launch whose release was not stated targets an SGLang build kv4lint does not know: options
    and values no release it knows (up to ``upto``, a dated nightly's next release) takes together, a
    development image, a nightly newer than every release kv4lint knows, a git install."""
    which = f"up to {upto}, the release after the nightly," if upto else "kv4lint knows"
    out = [] if found.version is not None or not found.evidence else [
        f"no release {which} takes all its options and values: " + ", ".join(found.evidence)]
    out += [f"{h.reason} (a {h.value} build, not a release)" for h in launch.hints if h.kind == "sglang_build"]
    out += [f"{h.reason} (a nightly of {h.value}, newer than SGLang {NEWEST_LABEL}, the newest release kv4lint "
            "knows)" for h in launch.hints if h.kind == "sglang_nightly" and nightly_between(h.value)[1] is None]
    out += [f"{where}: SGLang installed from git or source" for where in settings.repo_sglang_source_installs]
    return tuple(dict.fromkeys(out))
