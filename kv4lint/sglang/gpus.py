"""GPU names and the arch SGLang's facts are keyed by: the one model of every way a file names its machine.

A leaf: :func:`normalise_gpu` (``--gpu``, the target's resolver) reads its table, and every frontend asks here what
a name it found means: an image tag's ``-b200``, a scheduler's request (Slurm ``--gres=gpu:h100:8``, a Kubernetes
node label, a cloud instance type, Modal ``gpu="H100:8"``), a heading or comment in free text (``### 8x B200``),
and the names ``nvidia-smi`` prints, which a branch of a script compares (``nvidia-smi | grep -q B200``).

Three readers, three strictnesses:

* :func:`parse_gpu` reads a value a scheduler field holds: the whole value names one GPU or a machine with one
  (``NVIDIA-H100-80GB-HBM3``, ``nvidia-tesla-a100``, ``p5.48xlarge``, ``A100-80G``). A value it cannot map gives
  a :class:`GpuName` with no archs: the file names a GPU kv4lint does not know, which is no evidence.
* :func:`find_gpus` finds GPU names in free text (a comment, a heading, a tab's label). It never guesses: a name
  must stand as a word of its own (``a10`` inside ``a100``, ``Qwen3-30B-A3B``, ``v0.5.10`` are no names); a short
  name (``L4``, ``T4``, ``A10``, ``H20``) counts only with a word that makes it a GPU (``NVIDIA L4``, ``8x T4``,
  ``L4 GPU``) or as a whole label; paths and URLs are skipped; and a text that negates, compares or hedges (``not
  on H100``, ``B200 vs H100``, ``TODO: B200``) names nothing.
* :func:`match_archs` and :func:`compare_archs` say which archs a branch's test of the GPU selects: ``grep B200``
  against ``nvidia-smi``'s name is true on ``NVIDIA B200`` and ``NVIDIA GB200``, both sm100; ``[ "$CC" -ge 10 ]``
  on a compute capability of 10 and up.

Archs are candidate sets (:class:`ArchSet`): a list names several (``In [H100, B200]`` -> sm90 sm100), a branch's
``else`` is a complement (every arch but those).

And how SGLang tells the archs apart: :data:`CLASSES` (one class per GPU major, measured on the wheels), the
candidates when no GPU is stated (:data:`ARCHS`), and how messages name a set of them (:func:`describe`).
"""

from __future__ import annotations

import functools
import re

# The CUDA archs, in order (compute capability major, minor); kv4lint's rules key their facts by the major
# (docs/sglang-rules.md §2.1).
CUDA_ARCHS: tuple[str, ...] = ("sm70", "sm75", "sm80", "sm86", "sm87", "sm89", "sm90", "sm100", "sm103", "sm110",
                               "sm120", "sm121")


def capability(arch: str) -> tuple[int, int]:
    """``"sm103"`` -> ``(10, 3)``."""
    digits = arch[2:]
    return int(digits[:-1]), int(digits[-1])


# Names a user types for a GPU -> SGLang's arch facts (docs/sglang-rules.md §2.1). Keys are lower case; a key's
# hyphens are optional where it is read (``rtx-pro-6000`` = ``rtxpro6000``).
GPU_ARCH: dict[str, str] = {
    # Volta, Turing
    "v100": "sm70", "t4": "sm75", "t4g": "sm75",
    # Ampere / Ada
    "a100": "sm80", "a800": "sm80", "a30": "sm80", "a10": "sm86", "a10g": "sm86", "a16": "sm86", "a40": "sm86",
    "a6000": "sm86", "rtxa6000": "sm86", "rtx3090": "sm86", "rtx3080": "sm86", "orin": "sm87", "jetson-orin": "sm87",
    "l4": "sm89", "l20": "sm89", "l40": "sm89", "l40s": "sm89", "rtx4090": "sm89", "rtx4080": "sm89",
    "rtx6000ada": "sm89",
    # Hopper
    "h100": "sm90", "h800": "sm90", "h200": "sm90", "h20": "sm90", "gh200": "sm90",
    # Blackwell datacenter
    "b100": "sm100", "b200": "sm100", "gb200": "sm100", "b300": "sm103", "gb300": "sm103",
    # Thor
    "thor": "sm110", "jetson-thor": "sm110",
    # Blackwell consumer / workstation
    "rtx5090": "sm120", "rtx5080": "sm120", "rtx5070": "sm120", "rtx5060": "sm120",
    "rtxpro6000": "sm120", "rtx-pro-6000": "sm120", "rtx6000pro": "sm120",
    "gb10": "sm121", "dgx-spark": "sm121", "dgxspark": "sm121", "spark": "sm121",
}

# Architecture families (NVIDIA's names; GPU feature discovery's ``nvidia.com/gpu.family`` values).
FAMILIES: dict[str, tuple[str, ...]] = {
    "volta": ("sm70",), "turing": ("sm75",), "ampere": ("sm80", "sm86", "sm87"), "ada": ("sm89",),
    "adalovelace": ("sm89",), "hopper": ("sm90",), "blackwell": ("sm100", "sm103", "sm110", "sm120", "sm121"),
    "blackwellultra": ("sm103",),
}

# What ``nvidia-smi --query-gpu=name`` (and ``nvidia-smi -L``, ``torch.cuda.get_device_name()``) prints, per arch:
# what a script's ``grep B200`` is matched against.
SMI_NAMES: dict[str, tuple[str, ...]] = {
    "sm70": ("Tesla V100-SXM2-32GB", "Tesla V100-SXM2-16GB", "Tesla V100-PCIE-16GB", "Quadro GV100"),
    "sm75": ("Tesla T4", "NVIDIA T4G", "NVIDIA GeForce RTX 2080 Ti", "Quadro RTX 6000", "Quadro RTX 8000"),
    "sm80": ("NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-40GB", "NVIDIA A100 80GB PCIe", "NVIDIA A100-PCIE-40GB",
             "NVIDIA A800-SXM4-80GB", "NVIDIA A30"),
    "sm86": ("NVIDIA A10", "NVIDIA A10G", "NVIDIA A16", "NVIDIA A40", "NVIDIA A2", "NVIDIA RTX A6000",
             "NVIDIA RTX A5000", "NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3080"),
    "sm87": ("Orin (nvgpu)",),
    "sm89": ("NVIDIA L4", "NVIDIA L20", "NVIDIA L40", "NVIDIA L40S", "NVIDIA GeForce RTX 4090",
             "NVIDIA GeForce RTX 4080", "NVIDIA RTX 6000 Ada Generation"),
    "sm90": ("NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H100", "NVIDIA H200",
             "NVIDIA H200 NVL", "NVIDIA H800", "NVIDIA H20", "NVIDIA GH200 480GB", "NVIDIA GH200 144G HBM3e"),
    "sm100": ("NVIDIA B200", "NVIDIA GB200", "NVIDIA B100"),
    "sm103": ("NVIDIA B300 SXM6 AC", "NVIDIA GB300"),
    "sm110": ("NVIDIA Thor",),
    "sm120": ("NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 5080", "NVIDIA GeForce RTX 5070",
              "NVIDIA RTX PRO 6000 Blackwell Server Edition", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"),
    "sm121": ("NVIDIA GB10",),
}

# Accelerators of other platforms, by the first word of their name: the platform they mean (no CUDA arch).
_OTHER = re.compile(r"^(?:(?P<rocm>mi\d{3}[a-z]?|instinct)|(?P<hpu>gaudi\d?)|(?P<npu>ascend|910[bc]))$")

# ---------------------------------------------------------------------------
# Cloud machines whose type does not spell its GPU (a type that does, ``p6-b200.48xlarge``,
# ``Standard_ND96isr_H100_v5``, ``BM.GPU.H100.8``, ``a3-ultragpu-8g``'s H200 excepted, is read by its words).
#
# AWS: https://aws.amazon.com/ec2/instance-types/ (Accelerated Computing: P3, P4d, P4de, P5, P5e, P5en, G4dn, G5,
#   G5g, G6, Gr6, G6e).
# Google Cloud: https://cloud.google.com/compute/docs/accelerator-optimized-machines and
#   https://cloud.google.com/compute/docs/gpus (A2 Standard: A100 40GB, A2 Ultra: A100 80GB, A3 High/Mega/Edge: H100,
#   A3 Ultra: H200, A4: B200, A4X: GB200, G2: L4, G4: RTX PRO 6000).
# Azure: https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/nd-family and nc-family
#   (ND A100 v4 ``Standard_ND96asr_v4``, NDv2 ``Standard_ND40rs_v2``: V100; the others name their GPU).
# Oracle Cloud: https://docs.oracle.com/iaas/Content/Compute/References/computeshapes.htm (BM.GPU4.8 and
#   BM.GPU.B4.8: A100 40GB, BM.GPU3.8 / VM.GPU3.*: V100).
INSTANCE_TYPES: tuple[tuple[re.Pattern, str], ...] = tuple((re.compile(p), gpu) for p, gpu in (
    (r"^p3(?:dn)?\.", "v100"), (r"^p4de?\.", "a100"), (r"^p5\.", "h100"), (r"^p5e(?:n)?\.", "h200"),
    (r"^g4dn\.", "t4"), (r"^g5g\.", "t4g"), (r"^g5\.", "a10g"), (r"^gr?6\.", "l4"), (r"^g6e\.", "l40s"),
    (r"^a2-(?:highgpu|megagpu|ultragpu)-", "a100"), (r"^a3-(?:highgpu|megagpu|edgegpu)-", "h100"),
    (r"^a3-ultragpu-", "h200"), (r"^a4-highgpu-", "b200"), (r"^a4x-highgpu-", "gb200"), (r"^g2-standard-", "l4"),
    (r"^g4-standard-", "rtxpro6000"),
    (r"^standard_nd\d+asr_v4$", "a100"), (r"^standard_nd\d+rs_v2$", "v100"),
    (r"^bm\.gpu4\.", "a100"), (r"^bm\.gpu\.b4\.", "a100"), (r"^(?:bm|vm)\.gpu3\.", "v100"),
))


def instance_gpu(name: str) -> str | None:
    """The GPU of a cloud machine type that does not spell it (``p5.48xlarge`` -> ``h100``), else None."""
    low = name.strip().lower().removeprefix("ml.")  # SageMaker's ml.p5.48xlarge
    return next((gpu for pat, gpu in INSTANCE_TYPES if pat.search(low)), None)


# Kubernetes node labels that say which GPU a node has, and how their value names it: ``product`` (a GPU's or a
# machine's name: NVIDIA GPU feature discovery's ``nvidia.com/gpu.product`` (NVIDIA-H100-80GB-HBM3), GKE's
# ``cloud.google.com/gke-accelerator`` (nvidia-h100-80gb), the cloud instance type (p5.48xlarge), Karpenter's
# ``karpenter.k8s.aws/instance-gpu-name`` (h100), AMD's ``amd.com/gpu.product-name``), ``family``
# (``nvidia.com/gpu.family``: hopper) or ``major`` (``nvidia.com/gpu.compute.major``: 9).
# Sources: https://github.com/NVIDIA/k8s-device-plugin (gpu-feature-discovery labels),
# https://cloud.google.com/kubernetes-engine/docs/how-to/gpus, https://kubernetes.io/docs/reference/labels-annotations-
# taints/#nodekubernetesioinstance-type, https://karpenter.sh/docs/reference/instance-types/.
NODE_LABELS: dict[str, str] = {
    "nvidia.com/gpu.product": "product", "cloud.google.com/gke-accelerator": "product",
    "node.kubernetes.io/instance-type": "product", "beta.kubernetes.io/instance-type": "product",
    "karpenter.k8s.aws/instance-gpu-name": "product", "amd.com/gpu.product-name": "product",
    "nvidia.com/gpu.family": "family", "nvidia.com/gpu.compute.major": "major",
}


# ---------------------------------------------------------------------------
# The archs SGLang tells apart, and their names

# The candidates when no GPU is stated, oldest first: the archs SGLang's FP4 KV cache releases are built for
# (a subset of CUDA_ARCHS, which also holds the older archs a name can map to).
ARCHS: tuple[str, ...] = ("sm80", "sm86", "sm89", "sm90", "sm100", "sm103", "sm110", "sm120", "sm121")

# The archs SGLang's checks cannot tell apart, each class under its first arch (its representative). SGLang
# decides by probes that compare the GPU's major version only (``_check_cuda_device_version``: is_sm90,
# is_sm100, is_sm120, is_blackwell ...); the checks kv4lint reproduces read no probe of a minor version (0.5.23's
# is_sm120()/is_sm121() and ``device_sm`` serve model overrides kv4lint does not judge). Measured on every
# release's wheel: tests/test_conformance.py::test_gpu_classes (docs/sglang-rules.md §2.1).
CLASSES: dict[str, tuple[str, ...]] = {
    "sm80": ("sm80", "sm86", "sm89"),
    "sm90": ("sm90",),
    "sm100": ("sm100", "sm103"),
    "sm110": ("sm110",),
    "sm120": ("sm120", "sm121"),
}
_CLASS_OF = {a: rep for rep, members in CLASSES.items() for a in members}

# The family of each arch, in the words GPU makers use; and of each class as a whole.
FAMILY: dict[str, str] = {"sm80": "Ampere", "sm86": "Ampere", "sm89": "Ada", "sm90": "Hopper", "sm100": "Blackwell",
                          "sm103": "Blackwell Ultra", "sm110": "Thor", "sm120": "Blackwell RTX", "sm121": "GB10"}
CLASS_NAME: dict[str, tuple[str, str]] = {  # representative -> (the class's families, its archs in brief)
    "sm80": ("Ampere/Ada", "sm8x"), "sm90": ("Hopper", "sm90"), "sm100": ("Blackwell", "sm10x"),
    "sm110": ("Thor", "sm110"), "sm120": ("Blackwell RTX/GB10", "sm12x"),
}

_SM = re.compile(r"^(?:sm_?|compute_?)?(\d{2,3})[af]?$")


# GPU_ARCH's names without their dashes ("jetsonorin"), each read once: no two of them name different archs (tested).
_FLAT = {k.replace("-", ""): v for k, v in GPU_ARCH.items()}


def normalise_gpu(name: str) -> str:
    """``"H100"``, ``"sm_90a"``, ``"9.0"``, ``"gb200"`` -> ``"sm90"``/``"sm100"``; ValueError otherwise."""
    n = name.strip().lower().replace(" ", "").replace("_", "-")
    n2 = n.replace("-", "")
    if n2 in _FLAT:  # (GPU_ARCH's own names too: each is in _FLAT without its dashes, meaning the same arch)
        return _FLAT[n2]
    m = re.match(r"^(\d+)\.(\d)$", n)  # compute capability "9.0", "12.1"
    if m:
        return f"sm{int(m.group(1))}{m.group(2)}"
    m = _SM.match(n2)
    if m:
        return f"sm{m.group(1)}"
    # nvidia-h100-80gb-hbm3, "NVIDIA B200", "RTX PRO 6000" ...
    toks = [t for t in re.split(r"[^a-z0-9]+", name.lower()) if t]
    for size in (3, 2, 1):
        for i in range(len(toks) - size + 1):
            joined = "".join(toks[i:i + size])
            if joined in _FLAT and len(joined) >= 3:
                return _FLAT[joined]
    raise ValueError(f"unknown GPU {name!r} (use an arch like sm90/sm100/sm120, or a name like h100, b200, rtx5090)")


def arch_major(arch: str | None) -> int | None:
    """``"sm90"`` -> 9, ``"sm103"`` -> 10; None for None or a name that is no arch."""
    return capability(arch)[0] if arch and re.match(r"^sm\d{2,3}$", arch) else None


def class_of(arch: str) -> str:
    """The representative of the archs SGLang treats like ``arch`` (``"sm103"`` -> ``"sm100"``); an arch kv4lint
    does not know is a class of its own."""
    return _CLASS_OF.get(arch, arch)


def representatives(archs) -> tuple[str, ...]:
    """One arch per class among ``archs`` (the first of each, in :data:`ARCHS` order): the archs to judge."""
    return _representatives(ordered(archs))


@functools.lru_cache(maxsize=1024)
def _representatives(archs: tuple[str, ...]) -> tuple[str, ...]:
    out: dict[str, str] = {}
    for a in archs:
        out.setdefault(class_of(a), a)
    return tuple(out.values())


def members(rep: str, archs) -> tuple[str, ...]:
    """The archs of ``archs`` that ``rep`` stands for (those of its class)."""
    return _members(class_of(rep), ordered(archs))


@functools.lru_cache(maxsize=1024)
def _members(cls: str, archs: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(a for a in archs if class_of(a) == cls)


def ordered(archs) -> tuple[str, ...]:
    """``archs`` without repeats, known archs in :data:`ARCHS` order, then the others by name."""
    return _ordered(frozenset(archs))


@functools.lru_cache(maxsize=1024)
def _ordered(archs: frozenset[str]) -> tuple[str, ...]:
    return tuple(a for a in ARCHS if a in archs) + tuple(sorted(archs - set(ARCHS)))


def arch_name(arch: str | None) -> str:
    """``"sm90"`` -> ``"sm90 (Hopper)"``."""
    if not arch:
        return "unknown"
    return f"{arch} ({FAMILY[arch]})" if arch in FAMILY else arch


def _groups(archs) -> list[tuple[str, str]]:
    """(family, archs in brief) per class of ``archs``: a whole class by its name, a part by its archs."""
    out: list[tuple[str, str]] = []
    for rep in representatives(archs):
        part = members(rep, archs)
        whole = CLASSES.get(class_of(rep))
        if whole is not None and set(whole) <= set(part) and len(whole) > 1:
            out.append(CLASS_NAME[class_of(rep)])
        else:
            families = "/".join(dict.fromkeys(FAMILY.get(a, a) for a in part))
            out.append((families, ", ".join(part)))
    return out


def and_list(items, conj: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c`` (``conj``: ``or``)."""
    items = list(items)
    if not items:
        return ""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {conj} " + items[-1]


def describe(archs, *, names: bool = False, brief: bool = False, conj: str = "and") -> str:
    """A set of archs in plain words first: ``Ampere/Ada and Hopper (sm8x, sm90)``, ``Hopper (sm90)``;
    ``names``: the families alone (``Ampere/Ada and Hopper``); ``brief``: the archs alone (``sm8x and sm90``);
    ``conj`` joins the last two (``or``)."""
    return _describe(ordered(archs), names, brief, conj)


@functools.lru_cache(maxsize=1024)
def _describe(archs: tuple[str, ...], names: bool, brief: bool, conj: str) -> str:
    groups = _groups(archs)
    if brief:
        return and_list([g[1] for g in groups], conj)
    families = and_list(dict.fromkeys(g[0] for g in groups), conj)
    return families if names else f"{families} ({', '.join(g[1] for g in groups)})"


def every(archs) -> bool:
    """Whether ``archs`` is every arch kv4lint knows: a GPU that is not stated."""
    return set(ARCHS) <= set(archs)


# ---------------------------------------------------------------------------
# Candidate sets


class ArchSet:
    """A set of CUDA archs, or its complement (``negated``: every arch but these). Immutable."""

    __slots__ = ("archs", "negated")

    def __init__(self, archs, negated: bool = False):
        self.archs = frozenset(archs)
        self.negated = negated

    def __eq__(self, other) -> bool:
        return isinstance(other, ArchSet) and (self.archs, self.negated) == (other.archs, other.negated)

    def __hash__(self) -> int:
        return hash((self.archs, self.negated))

    def __repr__(self) -> str:
        return f"ArchSet({self.value!r})"

    @property
    def value(self) -> str:
        """As a hint's value: ``"sm90 sm100"``, ``"!sm100"`` (``""`` for the empty set)."""
        text = " ".join(sorted(self.archs, key=_arch_order))
        return f"!{text}" if self.negated else text

    def complement(self) -> "ArchSet":
        return ArchSet(self.archs, not self.negated)

    def __and__(self, other: "ArchSet") -> "ArchSet":
        if not self.negated and not other.negated:
            return ArchSet(self.archs & other.archs)
        if self.negated and other.negated:
            return ArchSet(self.archs | other.archs, True)
        pos, neg = (self, other) if not self.negated else (other, self)
        return ArchSet(pos.archs - neg.archs)

    def __or__(self, other: "ArchSet") -> "ArchSet":
        return (self.complement() & other.complement()).complement()

    @property
    def everything(self) -> bool:
        return self.negated and not self.archs


def _arch_order(arch: str) -> tuple:
    return (CUDA_ARCHS.index(arch),) if arch in CUDA_ARCHS else (len(CUDA_ARCHS), arch)


def arch_set(value: str) -> ArchSet:
    """A hint's value back as a set: ``"!sm100 sm103"``."""
    neg = value.startswith("!")
    return ArchSet(value.lstrip("!").split(), neg)


def by_capability(test) -> ArchSet:
    """The archs whose compute capability ``(major, minor)`` passes ``test``."""
    return ArchSet(a for a in CUDA_ARCHS if test(*capability(a)))


# ---------------------------------------------------------------------------
# Names


class GpuName:
    """A GPU a file names: the words as written, the archs they may be (empty: a GPU kv4lint cannot map), and the
    platform they imply (``cuda`` for NVIDIA, ``rocm`` for AMD Instinct ...; None when not told)."""

    __slots__ = ("text", "archs", "platform")

    def __init__(self, text: str, archs: tuple[str, ...], platform: str | None):
        self.text = text
        self.archs = archs
        self.platform = platform

    def __eq__(self, other) -> bool:
        return isinstance(other, GpuName) and (self.text, self.archs, self.platform) == \
            (other.text, other.archs, other.platform)

    def __repr__(self) -> str:
        return f"GpuName({self.text!r}, {self.archs!r}, {self.platform!r})"


_COUNT = re.compile(r"^\d{1,3}[x×](.+)$|^(.+?)[x×]\d{1,2}$")  # 8xH100, H100x8


def _word(word: str) -> GpuName | None:
    """One word of a name (lower case, no separators): an NVIDIA GPU or family, another platform's accelerator."""
    for w in (word, *(g for g in (_COUNT.match(word) or re.match("", "")).groups() if g)):
        if w in _FLAT:
            return GpuName(w, (_FLAT[w],), "cuda")
        if w in FAMILIES:
            return GpuName(w, FAMILIES[w], "cuda")
        m = _OTHER.match(w)
        if m:
            return GpuName(w, (), m.lastgroup)
    return None


def parse_gpu(value: str) -> GpuName | None:
    """The GPU a scheduler's value names: ``NVIDIA-H100-80GB-HBM3``, ``nvidia-h100-80gb``, ``H100:8``, ``A100-80G``,
    ``NVIDIA_TESLA_V100``, ``AMD-Instinct-MI300X-OAM``, ``p5.48xlarge``, ``a4-highgpu-8g``, ``hopper``.

    None when no word of it is a GPU; the value's own words, longest first (``RTX PRO 6000`` before ``6000``).
    """
    text = value.strip()
    low = text.lower()
    if not low:
        return None
    inst = instance_gpu(low)
    if inst is not None:
        return GpuName(text, (GPU_ARCH[inst],), "cuda")
    low = low.split(":", 1)[0] if re.match(r"^[\w .-]+:\d", low) else low  # H100:8, A100-80GB:2
    words = [w for w in re.split(r"[^a-z0-9×]+", low) if w]
    for size in (3, 2):
        for i in range(len(words) - size + 1):
            joined = "".join(words[i:i + size])
            if joined in _FLAT or joined in FAMILIES:
                return _named(text, _word(joined))
    for w in words:
        found = _word(w)
        if found is not None:
            return _named(text, found)
    return None


def _named(text: str, found: GpuName) -> GpuName:
    archs = found.archs
    if text.rstrip().endswith("+") and archs == ("sm100",):  # Modal "B200+": a B200 or a B300
        archs = ("sm100", "sm103")
    return GpuName(text, archs, found.platform)


# -- free text ---------------------------------------------------------------

_FREE_NAMES = (
    r"RTX[ -]?PRO[ -]?6000(?:[ -]?Blackwell)?|RTX[ -]?6000[ -]?Ada|RTX[ -]?A6000|RTX[ -]?[345]0[6-9]0(?:[ -]?Ti)?"
    r"|GeForce[ -]RTX[ -]?[345]0[6-9]0|DGX[ -]?Spark|Jetson[ -]?(?:AGX[ -]?)?(?:Thor|Orin)"
    r"|GB300|GB200|GH200|GB10|B300|B200|B100|H800|H200|H100|H20|A800|A100|A10G|A10|A16|A30|A40|L40S|L40|L20|L4|T4"
    r"|V100|MI\d{3}[AXL]?|Hopper|Blackwell(?:[ -]Ultra)?|Ampere|Ada[ -]Lovelace"
    r"|SM[ _]?(?:70|75|80|86|87|89|90|100|103|110|120|121)[af]?"
)
_FREE = re.compile(r"(?:(?<=\d[x×])|(?<=\d [x×] )|(?<![A-Za-z0-9_]))(" + _FREE_NAMES + r")(?=s?(?![A-Za-z0-9])|[x×]\d)",
                   re.I)
# Short names that are other words too (OSI L4, a T4 template, cell A10): a GPU only with a word that says so.
_SHORT = {"a10", "a16", "a30", "a40", "l4", "l20", "t4", "h20"}
_SAYS_GPU_BEFORE = re.compile(r"(?:nvidia|tesla|geforce|\d+\s?[x×]|\d+\s?[x×]\s|\dx)\s*$", re.I)
_SAYS_GPU_AFTER = re.compile(r"^s?\s*(?:gpus?|tensor core|pcie|sxm|nvl|\d+\s?gb\b)", re.I)
# Words that make a text say something other than "this runs here": negation, comparison, hedging, failure.
_HEDGE = re.compile(r"\b(?:not|no|non|never|without|except|unsupported|instead|vs|versus|than|unlike|compared"
                    r"|todo|fixme|xxx|if|unless|once|until|avoid|fails?|failed|failing|errors?|broken|crash\w*"
                    r"|can't|cannot|won't|doesn't|don't|isn't)\b|n't\b", re.I)
_URL_OR_PATH = re.compile(r"\S*(?:://|/)\S*")
_SM_NAME = re.compile(r"^sm[ _]?(\d+)[af]?$", re.I)
_OTHER_FREE = re.compile(r"^mi\d{3}[axl]?$", re.I)


class Found:
    """A GPU name found in free text: where (offsets in the text) and what it names."""

    __slots__ = ("start", "end", "name")

    def __init__(self, start: int, end: int, name: GpuName):
        self.start = start
        self.end = end
        self.name = name

    def __repr__(self) -> str:
        return f"Found({self.start}, {self.end}, {self.name!r})"


def _free_name(word: str) -> GpuName | None:
    flat = re.sub(r"[ _-]", "", word).lower()
    m = _SM_NAME.match(word)
    if m:
        arch = f"sm{m.group(1)}"
        return GpuName(word, (arch,), "cuda") if arch in CUDA_ARCHS else None
    if _OTHER_FREE.match(word):
        return GpuName(word, (), "rocm")
    if flat.startswith("geforce"):
        flat = flat[len("geforce"):]
    if flat.startswith("jetson"):
        flat = "jetson" + flat[len("jetson"):].replace("agx", "")
    flat = {"rtxpro6000blackwell": "rtxpro6000", "jetsonthor": "thor", "jetsonorin": "orin"}.get(flat, flat)
    if flat.endswith("ti") and flat[:-2] in _FLAT:
        flat = flat[:-2]
    if flat in _FLAT:
        return GpuName(word, (_FLAT[flat],), "cuda")
    if flat in FAMILIES:
        return GpuName(word, FAMILIES[flat], "cuda")
    return None


def _masked(text: str) -> str:
    """``text`` with URLs and paths blanked (offsets kept); a slash list of names (``H200/B200``) stays."""
    def blank(m: re.Match) -> str:
        parts = [p.strip("()[],.;:*`'\"") for p in m.group().split("/")]
        if "://" not in m.group() and all(not p or _FREE.fullmatch(p) for p in parts) and any(parts):
            return m.group()
        return " " * len(m.group())
    return _URL_OR_PATH.sub(blank, text) if "/" in text else text


def archs_named(names) -> ArchSet:
    """The candidate set of the CUDA GPUs named together (``H200/B200`` -> sm90 sm100). A family named beside one
    of its members explains it (``SM100 (Blackwell)`` is sm100, not every Blackwell)."""
    cuda = [n for n in names if n.platform == "cuda" and n.archs]
    members = {a for n in cuda if n.text.replace(" ", "").replace("-", "").lower() not in FAMILIES for a in n.archs}
    out: set[str] = set(members)
    for n in cuda:
        if n.text.replace(" ", "").replace("-", "").lower() in FAMILIES and not members & set(n.archs):
            out |= set(n.archs)
    return ArchSet(out)


def find_gpus(text: str, *, label: bool = False) -> list[Found]:
    """The GPU names of a free text (a comment, a heading, a tab's label), in order; [] when the text hedges.

    ``label``: the text is a title on its own (a heading, a tab): a short name alone is a GPU there (``### L4``).
    """
    if not text or _HEDGE.search(text):
        return []
    body = _masked(text)
    bare = re.sub(r"^[\s#*>=!`'\"\[\]()0-9.:-]*|[\s*`'\":()\[\]]*$", "", body).lower()
    out: list[Found] = []
    for m in _FREE.finditer(body):
        word = m.group(1)
        name = _free_name(word)
        if name is None:
            continue
        flat = word.lower()
        if flat in _SHORT and not (label and bare in (flat, f"nvidia {flat}")) and not (
                _SAYS_GPU_BEFORE.search(body[:m.start()]) or _SAYS_GPU_AFTER.match(body[m.end():])):
            continue
        if flat == "ampere" and re.match(r"\s*(?:altra|one|computing)\b", body[m.end():], re.I):
            continue  # Ampere Computing's CPUs
        out.append(Found(m.start(1), m.end(1), name))
    return out


# -- nvidia-smi ----------------------------------------------------------------

def _readings(arch: str, kind: str) -> tuple[str, ...]:
    """How a script reads the GPU of ``arch``: its names (``name``), or its compute capability as
    ``nvidia-smi --query-gpu=compute_cap`` prints it (``cc``: ``10.0``), its major (``major``: ``10``) or both
    digits (``sm``: ``100``)."""
    major, minor = capability(arch)
    return {"name": SMI_NAMES.get(arch, ()), "cc": (f"{major}.{minor}",), "major": (str(major),),
            "sm": (f"{major}{minor}",)}[kind]


def match_archs(pattern: str, kind: str = "name", *, regex: bool = False, ignore_case: bool = False,
                whole: bool = False) -> tuple[ArchSet, ArchSet] | None:
    """What a branch that matches ``pattern`` against the GPU (read as ``kind``, :func:`_readings`) selects: (the
    archs it matches on, the archs it does not match on); None when it matches no arch kv4lint knows, or all.

    ``grep -q B200`` matches ``NVIDIA B200`` and ``NVIDIA GB200``: (sm100, every arch). The second set is the
    ``else``: an arch is out of it only when every one of its names matches (``grep -q H100`` leaves sm90 in: an
    H200 is no H100). ``whole``: the pattern must match all of the text (``[[ $GPU == "NVIDIA H100" ]]``).
    """
    flags = re.I if ignore_case else 0
    try:
        rx = re.compile(pattern if regex else re.escape(pattern), flags)
    except re.error:
        return None
    hit: set[str] = set()
    miss: set[str] = set()
    for arch in CUDA_ARCHS:
        for text in _readings(arch, kind):
            (hit if (rx.fullmatch(text) if whole else rx.search(text)) else miss).add(arch)
    if not hit or not miss:
        return None
    return ArchSet(hit), ArchSet(set(CUDA_ARCHS) - miss, True)


def compare_archs(kind: str, op: str, number: float) -> tuple[ArchSet, ArchSet] | None:
    """A numeric test of the GPU's compute capability (read as ``kind``: ``cc`` 10.0, ``major`` 10, ``sm`` 100)
    against ``number``: (the archs it holds on, its complement). A ``cc`` or ``major`` compared with a number
    past 20 is read as ``sm`` (``${CC//./} -ge 100``), an ``sm`` with one under 20 as ``major``."""
    if kind in ("cc", "major") and number >= 20:
        kind = "sm"
    elif kind == "sm" and number < 20:
        kind = "major"
    tests = {"-eq": lambda a, b: a == b, "==": lambda a, b: a == b, "-ne": lambda a, b: a != b,
             "!=": lambda a, b: a != b, "-ge": lambda a, b: a >= b, ">=": lambda a, b: a >= b,
             "-gt": lambda a, b: a > b, ">": lambda a, b: a > b, "-le": lambda a, b: a <= b,
             "<=": lambda a, b: a <= b, "-lt": lambda a, b: a < b, "<": lambda a, b: a < b}
    test = tests.get(op)
    if test is None:
        return None
    on = by_capability(lambda major, minor: test(
        major + minor / 10 if kind == "cc" else major if kind == "major" else major * 10 + minor, number))
    if not on.archs or len(on.archs) == len(CUDA_ARCHS):
        return None
    return on, on.complement()
