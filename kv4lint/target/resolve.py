"""The one resolver: a launch's target, decided axis by axis from the evidence the frontends report.

Each axis (the SGLang release, the platform, the GPU, the model's attention) takes the first rung of one
precedence that says something: what the user states (``--sglang-version``, ``--platform``, ``--gpu``, the
configuration, ``--platform auto``) > what the file itself says (its hints: an image tag, ``--device``, the
model path, the GPU a scheduler request, heading or comment names) > what the repository pins (requirements,
lock files) > what kv4lint infers (the newest release that takes every option and value of the launch) > every
candidate (every GPU arch, MHA and MLA). The GPU and the model's attention are candidate *sets*; the rules judge
the launch on each candidate and say where SGLang refuses it. Every part says where it came from
(``Target.sources``, ``--show-target``).

The release a launch was written for is inferred by SGLang's argument parser, which the rules own: the caller
passes it in (``infer``), so that the target never imports the rules.
"""

from __future__ import annotations

from fnmatch import fnmatch
from typing import Callable, Protocol

from kv4lint.base.memo import Memo
from kv4lint.base.model import Hint, Launch
from kv4lint.base.settings import Settings
from kv4lint.sglang.gpus import describe, normalise_gpu
from kv4lint.sglang.options import Args, normalise
from kv4lint.sglang.releases import (BEYOND_NEWEST_NOTE, NEWEST, NEWEST_LABEL, beyond_newest, nightly_between, parse,
                                     release)
from kv4lint.target import ModelInfo, Target, infer_model, normalise_platform, recalled
from kv4lint.target.gpu import choose
from kv4lint.target.weights import weights


class Inference(Protocol):
    """What the release inference gives (:class:`kv4lint.rules.parser.Inferred`): the release (None: a build
    kv4lint does not know), the launch read by its parser, the evidence as phrases and the words no release
    takes."""

    version: str | None
    args: Args
    evidence: tuple[str, ...]
    rejected: tuple


Infer = Callable[..., Inference]  # (launch, newest_args, *, upto) -> Inference


def resolve(launch: Launch, settings: Settings, *, infer: Infer, base_dir: str | None = None,
            line_of: Callable[[int], int] | None = None, run: object = None) -> tuple[Target, Args]:
    """The target ``launch`` is judged against, and its arguments as the target's release reads them.

    ``infer``: the release inference (``kv4lint.rules.parser.infer_release``); ``base_dir``: where a relative
    model path is looked for; ``line_of``: a character offset's line, to name where a hint is written; ``run``: an
    object that stands for one file's run, the same for each of its launches (what the tree's files said is read
    once per run: :data:`_RUN`)."""
    sources: dict[str, str] = {}
    first = {h.kind: h for h in reversed(launch.hints)}  # the nearest hint of each kind: an image, a --device
    version, args, inferred, evidence, words = _release(launch, settings, first, infer, sources)
    platform, reason, detected = _platform(args, settings, first, sources)
    gpu = _gpu(launch.hints, settings, platform, detected, sources, line_of)
    memo = _run_memo(run)
    if platform == "cuda" and gpu[0]:
        gpu = _weights(gpu, args, _judged_release(version, inferred, evidence), base_dir, sources, memo)
    model = _model(args, settings, base_dir, sources, memo)
    target = Target(platform=platform, archs=gpu[0], model=model, sglang_version=version, strict=settings.strict,
                    sources=sources, platform_reason=reason, gpu_level=gpu[1], version_inferred=inferred,
                    build_evidence=evidence, build_words=words)
    return target, args


# ---------------------------------------------------------------------------
# The release (needed first: the options a launch may use differ per release)


def _release(launch: Launch, settings: Settings, first: dict[str, Hint], infer: Infer, sources: dict):
    version = None
    inferred = False
    if settings.sglang_version:
        version = settings.sglang_version
        sources["sglang_version"] = settings.sources.get("sglang_version", "--sglang-version")
    elif "sglang_version" in first:
        version = first["sglang_version"].value
        sources["sglang_version"] = first["sglang_version"].reason
    elif settings.repo_sglang_version:
        version = settings.repo_sglang_version
        sources["sglang_version"] = settings.repo_sglang_version_source or "the repository"
    else:
        inferred = True
    if version is not None:
        try:
            if beyond_newest(parse(version)):
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
        nightly = first.get("sglang_nightly")
        before, upto = nightly_between(nightly.value) if nightly else (None, None)
        found = infer(launch, normalise(launch, upto) if upto else args, upto=upto)
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
    return version, args, inferred, evidence, words


def _build_evidence(launch: Launch, found: Inference, settings: Settings, upto: str | None) -> tuple[str, ...]:
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


# ---------------------------------------------------------------------------
# The platform, then the GPU (which means something on CUDA only)


def _platform(args: Args, settings: Settings, first: dict[str, Hint], sources: dict):
    """The platform, the phrase KV402 quotes, and the GPU ``--platform auto`` detected (arch, reason)."""
    platform, reason, detected = None, None, None
    if settings.platform and settings.platform != "auto":
        platform = normalise_platform(settings.platform)
        reason = settings.sources.get("platform", "--platform")
    elif settings.platform == "auto":
        from kv4lint.target import platform_detect  # --platform auto only

        det = platform_detect.detect()
        platform, reason = det.platform, det.reason
        detected = (det.arch, det.reason) if det.arch else None
    if platform is None:
        dev = args.get("device")
        if dev is not None and dev.known and dev.text:
            try:
                platform = normalise_platform(dev.text.split(":")[0])
                reason = f"--device {dev.text}" if args.form == "argv" else f"device={dev.text!r}"
            except ValueError:
                pass
    if platform is None and "platform" in first:
        platform, reason = first["platform"].value, first["platform"].reason
    if platform is None:
        platform, reason = "cuda", None
        sources["platform"] = "default (cuda)"
    else:
        sources["platform"] = reason or "?"
    return platform, reason, detected


def _gpu(hints: list[Hint], settings: Settings, platform: str, detected, sources: dict,
         line_of: Callable[[int], int] | None) -> tuple[tuple[str, ...], str]:
    """The GPU candidates (:mod:`kv4lint.target.gpu`) and the rung that chose them; none off CUDA."""
    if platform != "cuda":
        named = [h.reason for h in hints if h.kind == "gpu"]
        sources["gpu"] = f"none: the platform is {platform}" + (
            f" (the GPU named by {'; '.join(named)} does not apply)" if named else "")
        return (), "stated"
    stated = None
    if settings.gpu:
        stated = (normalise_gpu(settings.gpu), settings.sources.get("gpu", "--gpu"))
    elif detected is not None:
        stated = detected

    def where(h: Hint) -> str:
        return f"line {line_of(h.span.start)}: " if line_of is not None and h.span is not None else ""

    choice = choose(stated, hints, where=where)
    sources["gpu"] = choice.source
    return choice.archs, choice.level


def _judged_release(version: str | None, inferred: bool, evidence: tuple[str, ...]) -> int | None:
    """The release (0.5.N) a launch is judged by, where kv4lint knows it: None for a build it does not know (no
    release takes the launch, a development image), a version newer than every release it knows, or none at all."""
    if version is None:
        return NEWEST if inferred and not evidence else None
    try:
        return None if beyond_newest(parse(version)) else release(version)
    except ValueError:
        return None


def _weights(gpu: tuple[tuple[str, ...], str], args: Args, n: int | None, base_dir: str | None,
             sources: dict, memo: Memo | None) -> tuple[tuple[str, ...], str]:
    """The GPU candidates narrowed to where the weights load (:mod:`kv4lint.target.weights`; the checkpoint a path
    names read once per run, from ``memo``). A GPU that is stated or named stays the target where they do not load
    there: that refusal is not kv4lint's to report."""
    found = weights(args, n, base_dir, memo) if n is not None else None
    if found is None or set(gpu[0]) <= found.archs:
        return gpu
    kept = tuple(a for a in gpu[0] if a in found.archs)
    if not kept:
        sources["gpu"] += f"; the weights do not load there: {found.why}; SGLang refuses them at load, which " \
                          "kv4lint does not judge"
        return gpu
    sources["gpu"] += f"; the weights narrow it to {describe(kept)}: {found.why}"
    return kept, gpu[1]


# ---------------------------------------------------------------------------
# The model's attention


def _model(args: Args, settings: Settings, base_dir: str | None, sources: dict, memo: Memo | None) -> ModelInfo:
    mp = args.get("model_path")
    model_path = mp.text if mp is not None and mp.known else None
    model = _inferred_model(model_path, base_dir, memo) if model_path else ModelInfo()
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
    return model


# What resolve read of the tree's files (the model a path names, its checkpoint's quantization) during one file's run,
# and the object that stands for the run: a file that names the same model again and again reads it once per run
# (kv4lint.target.recalled); a later run reads the files again (they may have changed).
_RUN: tuple[object, Memo | None] = (None, None)


def _run_memo(run: object) -> Memo | None:
    """The memo of ``run`` (a fresh one for another run); None without one."""
    global _RUN
    if run is None:
        return None
    held = _RUN
    if held[0] is not run:
        held = _RUN = (run, Memo(4096))
    return held[1]


def _inferred_model(model_path: str, base_dir: str | None, memo: Memo | None) -> ModelInfo:
    """:func:`infer_model`, read from ``memo`` when the same run asked it before (:func:`kv4lint.target.recalled`)."""
    return recalled(memo, ("model", model_path, base_dir), lambda: infer_model(model_path, base_dir=base_dir))
