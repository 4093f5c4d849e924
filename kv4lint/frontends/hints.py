"""Target hints found around a launch: container images, environment variables, devices, the GPU a file names.

Shared by the shell frontend and the container frontends (Dockerfile, YAML,
Markdown): each finds the text (an image reference, an ``export``, a
``--device`` option, a scheduler's GPU request, a heading) and asks here what
it says about the machine.  GPU names mean what :mod:`kv4lint.sglang.gpus`
says they mean: a ``gpu`` hint's value is a candidate set of archs
(:class:`~kv4lint.base.model.Hint`), with the platform the names imply beside it.

A hint only says what a launch *targets*; the rules decide what follows.
Nothing here guesses: a tag or variable that says nothing yields no hint.
"""

from __future__ import annotations

import re

from kv4lint.base.model import Hint, Span
from kv4lint.sglang.gpus import GPU_ARCH, NODE_LABELS, ArchSet, GpuName, archs_named, by_capability, find_gpus, \
    parse_gpu
from kv4lint.sglang.launchers import env_launcher

# Environment variables whose mere presence says which platform a script runs on
# (device-selection variables of each vendor's runtime).
PLATFORM_ENV: dict[str, str] = {
    "HIP_VISIBLE_DEVICES": "rocm",
    "ROCR_VISIBLE_DEVICES": "rocm",
    "HSA_OVERRIDE_GFX_VERSION": "rocm",
    "ZE_AFFINITY_MASK": "xpu",
    "ONEAPI_DEVICE_SELECTOR": "xpu",
    "ASCEND_RT_VISIBLE_DEVICES": "npu",
    "ASCEND_VISIBLE_DEVICES": "npu",
    "HABANA_VISIBLE_DEVICES": "hpu",
    "HABANA_VISIBLE_MODULES": "hpu",
    "MUSA_VISIBLE_DEVICES": "musa",
}

# Variables that select a platform only when set to a true value (docs/sglang-rules.md §5.4).
PLATFORM_SWITCH_ENV: dict[str, str] = {
    "SGLANG_USE_CPU_ENGINE": "cpu",
    "SGLANG_USE_AITER": "rocm",  # aiter kernels exist only on ROCm
}

# Both, in that order: the variables that say something of the platform whether or not a command names them.
PLATFORM_NAMES = dict.fromkeys((*PLATFORM_ENV, *PLATFORM_SWITCH_ENV))
# A word that could name a variable: what a text may read is the variables its words name, and these
# (kv4lint.frontends.embedded.names_read, the shell walk's inner shells and function calls, and whether a script
# may read what the files it sources set: kv4lint.pipeline.sourced).
NAME_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_TRUE = {"1", "true", "yes", "on", "y"}

# GPU names that appear as whole tokens in image tags (``...-cu129-b200``); their arch from the one table.
_TAG_GPUS: dict[str, str] = {name: GPU_ARCH[name] for name in (
    "b100", "b200", "gb200", "b300", "gb300", "h100", "h200", "h800", "h20", "gh200",
    "a100", "a800", "l40s", "rtx5090", "rtx4090", "gb10", "spark")}

# Image tag words that name no release but a moving development build (lmsysorg/sglang:dev, :nightly-...).
UNRELEASED_TAGS = frozenset({"dev", "nightly", "latest", "main"})

_VERSION = re.compile(r"(?<![\w.])v?(\d+\.\d+\.\d+(?:\.post\d+|\.?rc\d+|\.dev\d+)?)(?![\d])")
_CUDA_TAG = re.compile(r"(?:^|[-_.])cu(?:da)?-?\d{2,3}(?:$|[-_.])")
_SCHEMES = ("docker://", "oras://", "library://", "docker-daemon:", "docker-archive:", "shub://", "podman://")


def short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def split_image(image: str) -> tuple[str, str]:
    """``registry:5000/ns/name:tag@sha256:...`` -> (``registry:5000/ns/name``, ``tag``)."""
    ref = image.strip()
    for s in _SCHEMES:
        if ref.startswith(s):
            ref = ref[len(s):]
            break
    ref = ref.split("@", 1)[0]
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        return ref[:colon], ref[colon + 1:]
    return ref, ""


def image_platform(image: str) -> str | None:
    """The platform an image reference names, or None when it does not say."""
    name, tag = split_image(image)
    lname, ltag = name.lower(), tag.lower()
    both = f"{lname}:{ltag}"
    tokens = set(re.split(r"[^a-z0-9]+", both))
    if "rocm" in both or lname.startswith("rocm/") or any(t.startswith("rocm") for t in tokens) \
            or "mi300" in both or "mi325" in both or "mi355" in both:
        return "rocm"
    if lname.startswith("intel/") or any(t.startswith("xpu") for t in tokens) or "xpu" in lname:
        return "xpu"
    if any(t.startswith("npu") for t in tokens) or "ascend" in both or any(t.startswith("cann") for t in tokens):
        return "npu"
    if any(t.startswith(("hpu", "gaudi", "habana")) for t in tokens):
        return "hpu"
    if any(t.startswith("musa") for t in tokens):
        return "musa"
    if "cpu" in tokens or "xeon" in tokens or lname.endswith("-cpu"):
        return "cpu"
    if _CUDA_TAG.search(ltag) or lname.startswith(("nvidia/", "nvcr.io/nvidia")) or "cuda" in tokens:
        return "cuda"
    return None


def image_hints(image: str, span: Span | None) -> list[Hint]:
    """Hints from a container image reference (``lmsysorg/sglang:v0.5.23-rocm700-mi30x``).

    platform (rocm/xpu/npu/hpu/musa/cpu/cuda), sglang_version (only for images
    whose name says sglang, from a version in the tag) and gpu (a GPU name as a
    whole tag token, e.g. ``-b200``).
    """
    if not image or "$" in image:
        return []
    reason = f"image {short(image.strip())}"
    out: list[Hint] = []
    plat = image_platform(image)
    if plat:
        out.append(Hint("platform", plat, reason, span))
    name, tag = split_image(image)
    # A launcher's image (runpod/worker-sglang) is tagged with the launcher's own releases, not SGLang's.
    if ("sglang" in name.lower() or "sgl-" in name.lower()) and tag and env_launcher(image) is None:
        m = _VERSION.search(tag)
        if m:
            out.append(Hint("sglang_version", m.group(1).replace(".rc", "rc"), reason, span))
        else:
            tokens = re.split(r"[-_.]", tag.lower())
            day = next((t for t in tokens if re.fullmatch(r"20\d\d(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])", t)), None)
            build = next((t for t in tokens if t in UNRELEASED_TAGS), None)
            if build == "nightly" and day:  # nightly-dev-cu13-20260901-07c8f729: a build of a known day
                out.append(Hint("sglang_nightly", f"{day[:4]}-{day[4:6]}-{day[6:]}", reason, span))
            elif build:  # a development build: not a release kv4lint knows
                out.append(Hint("sglang_build", build, reason, span))
    for tok in re.split(r"[-_.]", tag.lower()):
        if tok in _TAG_GPUS:
            out.append(Hint("gpu", _TAG_GPUS[tok], reason, span))
            break
    return out


def env_hints(name: str, value: str | None, span: Span | None, *, how: str | None = None) -> list[Hint]:
    """Hints from an environment variable set (or exported) before a launch.

    ``value`` is None when unknown; ``how`` is a word put before the
    assignment in the reason (``"export"``, ``"docker run -e"``).
    """
    plat = PLATFORM_ENV.get(name)
    if plat is None:
        plat = PLATFORM_SWITCH_ENV.get(name)
        if plat is None or value is None or value.strip().lower() not in _TRUE:
            return []
    text = name if value is None else f"{name}={short(value, 40)}"
    reason = f"{how} {text}" if how else text
    return [Hint("platform", plat, reason, span)]


def device_hints(devices: list[tuple[str, Span | None]], *, how: str = "--device") -> list[Hint]:
    """Hints from the host devices a container is given (``docker run --device``, compose ``devices:``).

    ``/dev/kfd`` is the ROCm compute device; ``/dev/dri`` without it is an
    Intel GPU (ROCm containers take both); ``/dev/accel`` / ``/dev/davinci*``
    are Gaudi / Ascend; ``/dev/nvidia*`` is CUDA.
    """
    hints: list[Hint] = []
    paths = [(d.split(":", 1)[0], s) for d, s in devices if d]
    kfd = [(p, s) for p, s in paths if p.startswith("/dev/kfd")]
    if kfd:
        return [Hint("platform", "rocm", f"{how} {kfd[0][0]}", kfd[0][1])]
    for p, s in paths:
        if p.startswith("/dev/dri"):
            return [Hint("platform", "xpu", f"{how} {p}", s)]
        if p.startswith("/dev/davinci"):
            return [Hint("platform", "npu", f"{how} {p}", s)]
        if p.startswith("/dev/accel"):
            return [Hint("platform", "hpu", f"{how} {p}", s)]
        if p.startswith("/dev/mtgpu"):
            return [Hint("platform", "musa", f"{how} {p}", s)]
        if p.startswith("/dev/nvidia"):
            hints.append(Hint("platform", "cuda", f"{how} {p}", s))
            break
    return hints


def dedupe_hints(hints: list[Hint]) -> list[Hint]:
    """Keep the first hint of each (kind, value, reason), in order."""
    seen = set()
    out = []
    for h in hints:
        key = (h.kind, h.value, h.reason)
        if key not in seen:
            seen.add(key)
            out.append(h)
    return out


def fact_hints(facts, anchor) -> list[Hint]:
    """Hints from what a command's wrappers say (:class:`kv4lint.sglang.commands.Fact`), in order.

    ``anchor(word)`` is where a word is reported.  A weak platform fact
    (``docker run --gpus``) gives way to another platform of its group that
    the image, a device or the environment names.
    """
    out: list[Hint] = []
    strong: dict[int, bool] = {}
    for f in facts:
        if f.kind == "env":
            got = env_hints(f.name, f.text, anchor(f.word), how=f.how)
        elif f.kind == "image":
            got = image_hints(f.text, anchor(f.word))
        elif f.kind == "devices":
            got = device_hints([(w.text, anchor(w)) for w in f.words], how=f.how)
        elif f.kind == "gpu":
            got = slurm_hints(f.name, f.text, anchor(f.word), how=f.how) if f.text else []
        elif f.weak and strong.get(f.group):
            continue
        else:
            got = [Hint("platform", f.text, f.how, anchor(f.word))]
        if f.group and any(h.kind == "platform" and h.value != "cuda" for h in got):
            strong[f.group] = True
        out.extend(got)
    return out


# ---------------------------------------------------------------------------
# The GPU a file names (kv4lint.sglang.gpus): a candidate set, and the platform the names imply


def gpu_hints(names: list[GpuName], reason: str, span: Span | None, scope: str = "launch") -> list[Hint]:
    """The hints of the GPUs one form names together (``In [H100, H200]``, ``# For H200/B200``): one ``gpu`` hint,
    their candidate set, and the platform when they agree on one. A name kv4lint cannot map (no archs, no
    platform) makes the whole set unknown: a ``gpu`` hint with an empty value, which is no evidence."""
    if not names:
        return []
    if any(not n.archs and n.platform is None for n in names):
        return [Hint("gpu", "", reason, span, scope)]
    out: list[Hint] = []
    archs = archs_named(names)
    if archs.archs:
        out.append(Hint("gpu", archs.value, reason, span, scope))
    platforms = {n.platform for n in names}
    if len(platforms) == 1 and None not in platforms:
        out.append(Hint("platform", platforms.pop(), reason, span, scope))
    return out


def scheduler_hints(values: list[str], reason: str, span: Span | None, scope: str = "launch") -> list[Hint]:
    """A scheduler field that names GPUs (a node label's values, ``gpu=``, a gres type): each value is a GPU, so
    one kv4lint cannot read is an unknown GPU (an empty ``gpu`` hint), never ignored."""
    names = [parse_gpu(v) or GpuName(v, (), None) for v in values if v.strip()]
    return gpu_hints(names, reason, span, scope)


def text_hints(text: str, reason: str, span: Span | None, scope: str, *, label: bool = False) -> list[Hint]:
    """The GPUs a free text names (a comment, a heading, a tab's label): :func:`kv4lint.sglang.gpus.find_gpus`."""
    return gpu_hints([f.name for f in find_gpus(text, label=label)], reason, span, scope)


def guard_hint(archs: ArchSet, reason: str, span: Span | None) -> list[Hint]:
    """A branch that runs only on ``archs`` (a complement for the ``else``); nothing when it says nothing."""
    if archs.everything or (not archs.archs and not archs.negated):
        return []
    return [Hint("gpu", archs.value, reason, span, "guard")]


# Slurm's GPU requests (https://slurm.schedmd.com/sbatch.html, the options in
# kv4lint.sglang.commands.SLURM_GPU_OPTIONS): ``--gres=gpu[:TYPE]:N[,...]``, ``--gpus[-per-node|-per-task]=[TYPE:]N``
# (``-G``), and ``--constraint`` (``-C``) features, which a site names (``h100``, ``a100|h100``): only a feature
# that is a GPU's name counts.


def slurm_hints(option: str | None, value: str, span: Span | None, *, how: str | None = None,
                scope: str = "launch") -> list[Hint]:
    """Hints from one Slurm option (``--gres``, ``value`` ``gpu:h100:8``); ``how`` names where it is written
    (``#SBATCH``, ``srun``)."""
    option = option or ""
    reason = f"{how + ' ' if how else ''}{option}{'=' if option.startswith('--') else ' '}{short(value, 40)}"
    types: list[str] = []
    if option in ("--constraint", "-C", "--cluster-constraint"):
        names = [parse_gpu(w) for w in re.split(r"[&|,\[\]()*\s]+", value) if w and not w.isdigit()]
        names = [n for n in names if n is not None]
        if "&" in value and len(names) > 1:
            return []  # GPUs required together: no node has two
        return gpu_hints(names, reason, span, scope)
    for item in value.split(","):
        parts = [p for p in item.strip().split(":")]
        if option in ("--gres", "--tres-per-task"):
            if parts[0].split("/")[-1] != "gpu" or len(parts) < 2:
                continue
            parts = parts[1:]
        if len(parts) >= 2 or (parts and parts[0] and not parts[0].isdigit()):
            types.append(parts[0])
    return scheduler_hints(types, reason, span, scope) if types else []


def label_set(label: str, values: list[str]) -> tuple[ArchSet | None, set[str]] | None:
    """What a node label's values (``In [...]``) say: (the candidate archs, None when they name GPUs kv4lint cannot
    map or no CUDA arch; the platforms the values imply); None for a label that names no GPU."""
    how = NODE_LABELS.get(label)
    if how is None or not values:
        return None
    if how == "major":
        try:
            majors = {int(v) for v in values}
        except ValueError:
            return None, set()
        return by_capability(lambda major, minor: major in majors), {"cuda"}
    names = [parse_gpu(v) or GpuName(v, (), None) for v in values]
    if any(not n.archs and n.platform is None for n in names):
        return None, set()
    archs = archs_named(names)
    return (archs if archs.archs else None), {n.platform for n in names}


def _expression_set(label: str, operator: str, values: list[str]):
    """One node selector requirement: (archs, or None for a GPU kv4lint cannot map; the platforms it implies),
    None when it does not constrain the GPU."""
    if operator in ("Gt", "Lt") and NODE_LABELS.get(label) == "major" and len(values) == 1:
        try:
            n = int(values[0])
        except ValueError:
            return None
        return by_capability(lambda major, minor: major > n if operator == "Gt" else major < n), {"cuda"}
    if operator not in ("In", "NotIn"):
        return None
    got = label_set(label, values)
    if got is None:
        return None
    archs, platforms = got
    if operator == "NotIn":  # every node but these: no platform follows
        return (archs.complement() if archs is not None else None), set()
    return archs, platforms


def node_hints(selector: list[tuple[str, str, Span | None]],
               terms: list[list[tuple[str, str, list[str], Span | None]]]) -> list[Hint]:
    """The GPU a Kubernetes pod may run on: its ``nodeSelector`` entries ``(label, value, span)`` and its required
    node affinity's ``nodeSelectorTerms`` (ORed terms of ANDed ``(label, operator, values, span)``), on the
    labels of :data:`kv4lint.sglang.gpus.NODE_LABELS`: one candidate set (``In [H100, H200]`` is two archs, a
    ``NotIn`` a complement); a value kv4lint cannot map makes it unknown (an empty ``gpu`` hint). Preferred
    affinity is no requirement and is not read."""
    parts: list[tuple] = []  # (archs or None, platforms, reason, span)
    for label, value, span in selector:
        got = _expression_set(label, "In", [value]) if label in NODE_LABELS and value else None
        if got is not None:
            parts.append((*got, f"nodeSelector {label}: {value}", span))
    found_terms = []
    for term in terms:
        found = []
        for label, op, values, span in term:
            got = _expression_set(label, op, values)
            if got is not None:
                found.append((*got, f"node affinity {label} {op} [{', '.join(values)}]", span))
        found_terms.append(found)
    if found_terms and all(found_terms):  # a term that does not constrain the GPU lets any node in
        union: ArchSet | None = ArchSet(())
        platforms: set[str] = set()
        for found in found_terms:
            inter: ArchSet | None = ArchSet((), True)
            for archs, plats, _, _ in found:
                inter = None if inter is None or archs is None else inter & archs
                platforms |= plats
            union = None if union is None or inter is None else union | inter
        parts.append((union, platforms, "; ".join(r for found in found_terms for _, _, r, _ in found),
                      found_terms[0][0][3]))
    if not parts:
        return []
    reason = short("; ".join(p[2] for p in parts), 90)
    span = parts[0][3]
    if any(p[0] is None and p[1] != {"rocm"} for p in parts):
        return [Hint("gpu", "", reason, span)]
    out: list[Hint] = []
    archs = [p[0] for p in parts if p[0] is not None]
    if archs:
        both = archs[0]
        for a in archs[1:]:
            both = both & a
        if not both.everything:
            out.append(Hint("gpu", both.value, reason, span))
    platforms = set().union(*(p[1] for p in parts)) - {None}
    if len(platforms) == 1:
        out.append(Hint("platform", platforms.pop(), reason, span))
    return out


def path_hints(path: str) -> list[Hint]:
    """The GPU a file's name names (``dsr1_fp4_b200_sglang.sh``), else the nearest of its two folders that names
    one (``recipes/b200-fp4/serve.sh``): scope ``file``, below everything the text says. Read by the pipeline
    after the parse cache (which keys on the text, not the name); the rules of free text apply (a short name
    needs a word that makes it a GPU, ``h100_vs_b200`` names nothing)."""
    parts = [p for p in path.replace("\\", "/").split("/") if p and p not in (".", "..")]
    if not parts or path.startswith("<"):
        return []
    stem = parts[-1].rsplit(".", 1)[0] if "." in parts[-1][1:] else parts[-1]
    for part, what in [(stem, "file name"), *((p, "folder") for p in reversed(parts[-3:-1]))]:
        found = find_gpus(re.sub(r"[_.\-]+", " ", part))
        if found:
            shown = parts[-1] if what == "file name" else part + "/"
            return gpu_hints([f.name for f in found], f"{what} {short(shown, 50)}", None, "file")
    return []
