"""The GPU a file names, read by the frontends as raw evidence (``Hint`` records: value, scope, reason, span).

These hold before any resolver judges them: one test per form, the words each form is read from, and the ways
text fools a naive reader (``a10`` in ``a100``, ``L4`` the load balancer, ``H100 vs B200``, a path).
"""

from __future__ import annotations

import pytest

from kv4lint.frontends import scan
from kv4lint.frontends.hints import path_hints, scheduler_hints, slurm_hints
from kv4lint.sglang.gpus import GPU_ARCH, ArchSet, compare_archs, find_gpus, match_archs, normalise_gpu, parse_gpu

LAUNCH = "python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --kv-cache-dtype nvfp4"


def gpu_hints(text: str, path: str, language: str) -> list[list[tuple]]:
    """Per launch: its gpu hints as (value, scope, reason, the text at the span)."""
    result = scan(path, text, language)
    assert result.errors == []
    return [[(h.value, h.scope, h.reason, text[h.span.start:h.span.end] if h.span else None)
             for h in launch.hints if h.kind == "gpu"] for launch in result.launches]


def platforms(text: str, path: str, language: str) -> list[list[str]]:
    return [[h.value for h in launch.hints if h.kind == "platform"] for launch in scan(path, text, language).launches]


# ---------------------------------------------------------------------------
# The leaf: names, free text, sets


@pytest.mark.parametrize("value, archs, platform", [
    ("NVIDIA-H100-80GB-HBM3", ("sm90",), "cuda"), ("nvidia-h100-80gb", ("sm90",), "cuda"),
    ("nvidia-tesla-a100", ("sm80",), "cuda"), ("nvidia-b200", ("sm100",), "cuda"), ("H100:8", ("sm90",), "cuda"),
    ("A100-80G", ("sm80",), "cuda"), ("NVIDIA_TESLA_V100", ("sm70",), "cuda"), ("B200+", ("sm100", "sm103"), "cuda"),
    ("AMD-Instinct-MI300X-OAM", (), "rocm"), ("MI355X:8", (), "rocm"), ("p5.48xlarge", ("sm90",), "cuda"),
    ("p5en.48xlarge", ("sm90",), "cuda"), ("p6-b200.48xlarge", ("sm100",), "cuda"),
    ("p6e-gb200.36xlarge", ("sm100",), "cuda"), ("a3-ultragpu-8g", ("sm90",), "cuda"),
    ("a4-highgpu-8g", ("sm100",), "cuda"), ("Standard_ND96asr_v4", ("sm80",), "cuda"),
    ("Standard_ND96isr_H200_v5", ("sm90",), "cuda"), ("Standard_ND128isr_NDR_GB200_v6", ("sm100",), "cuda"),
    ("BM.GPU.B4.8", ("sm80",), "cuda"), ("NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", ("sm120",), "cuda"),
    ("NVIDIA-RTX-6000-Ada-Generation", ("sm89",), "cuda"), ("NVIDIA GeForce RTX 4090", ("sm89",), "cuda"),
    ("hopper", ("sm90",), "cuda"), ("8xH100", ("sm90",), "cuda"),
])
def test_a_scheduler_value_names_its_gpu(value, archs, platform):
    found = parse_gpu(value)
    assert (found.archs, found.platform) == (archs, platform)


@pytest.mark.parametrize("value", ["any", "80GB:8", "nvidia-tesla-k80", "Quadro-RTX-6000", "tpu-v5-lite"])
def test_a_value_that_names_no_gpu_kv4lint_knows_is_none(value):
    assert parse_gpu(value) is None


def test_an_unknown_gpu_in_a_scheduler_field_is_an_empty_hint_never_dropped():
    (hint,) = scheduler_hints(["nvidia-tesla-k80"], "nodeSelector ...", None)
    assert (hint.kind, hint.value) == ("gpu", "")


def test_the_names_users_type_for_gpu_mean_what_the_scheduler_names_mean():
    """``--gpu NAME`` (kv4lint.sglang.gpus.normalise_gpu) and a scheduler's value read the one table."""
    for name, arch in GPU_ARCH.items():
        assert normalise_gpu(name) == arch
        if len(name) > 2 and name != "spark":
            assert parse_gpu(name).archs == (arch,), name


def test_no_two_gpu_names_that_differ_by_dashes_name_different_archs():
    """The readers look a name up without its dashes (kv4lint.sglang.gpus._FLAT): each must mean one arch."""
    undashed: dict[str, set[str]] = {}
    for name, arch in GPU_ARCH.items():
        undashed.setdefault(name.replace("-", ""), set()).add(arch)
    assert {k: v for k, v in undashed.items() if len(v) > 1} == {}


@pytest.mark.parametrize("text, archs", [
    ("# 8x H100", "sm90"), ("# For H200/B200", "sm90 sm100"), ("#### gemma-4-31B-it (2x H200, TP=2)", "sm90"),
    ("# Serve Qwen/Qwen3-30B-A3B on 8xB200s", "sm100"), ("# 1x L4 GPU", "sm89"), ("# NVIDIA L4", "sm89"),
    ("# 4x H20", "sm90"), ("# SM100 (Blackwell)", "sm100"), ("## Blackwell", "sm100 sm103 sm110 sm120 sm121"),
    ("# tested on H100, H200 and B200", "sm90 sm100"), ("# RTX PRO 6000 Blackwell", "sm120"),
    ("# DGX Spark", "sm121"), ("# H100x8 node", "sm90"),
])
def test_free_text_names_gpus(text, archs):
    from kv4lint.sglang.gpus import archs_named
    assert archs_named([f.name for f in find_gpus(text)]).value == archs


@pytest.mark.parametrize("text", [
    "## Performance on H100 vs B200", "# does not work on H100", "# TODO: enable on B200", "# if you have a B200",
    "# see https://example.com/b200-results", "# config from recipes/b200-fp4/run.sh", "# Llama-3-70B on L4",
    "# L4 load balancer", "# cell A10 of the sheet", "# v0.5.10 release", "# Ampere Altra CPU server",
    "# Qwen3-235B-A22B", "# H20 cluster", "# a100x", "# the A1000 workstation",
])
def test_free_text_that_names_no_gpu_or_hedges_gives_nothing(text):
    assert find_gpus(text) == []


def test_a_short_name_alone_is_a_gpu_only_as_a_label():
    assert find_gpus("L4") == []
    assert [f.name.archs for f in find_gpus("L4", label=True)] == [("sm89",)]


def test_branch_tests_select_archs_and_the_else_is_what_is_left():
    assert match_archs("B200") == (ArchSet({"sm100"}), ArchSet((), True))  # a B100 runs the else too
    assert match_archs("B300") == (ArchSet({"sm103"}), ArchSet({"sm103"}, True))
    on, off = compare_archs("cc", "-ge", 10)
    assert on.value == "sm100 sm103 sm110 sm120 sm121" and off == on.complement()
    assert compare_archs("sm", "-eq", 90)[0].value == "sm90"
    assert compare_archs("cc", "-ge", 100)[0].value == "sm100 sm103 sm110 sm120 sm121"  # tr -d . dropped the dot


def test_candidate_sets_intersect_and_unite_with_complements():
    a, b = ArchSet({"sm90", "sm100"}), ArchSet({"sm100"}, True)
    assert (a & b).value == "sm90"
    assert (a | b).everything
    assert (b & ArchSet({"sm103"}, True)).value == "!sm100 sm103"


# ---------------------------------------------------------------------------
# Slurm


def test_sbatch_header_is_file_evidence():
    text = "#!/bin/bash\n#SBATCH --job-name=x\n#SBATCH --gres=gpu:h100:8\n#SBATCH -C 'a100|h100'\n\n" + LAUNCH + "\n"
    assert gpu_hints(text, "job.sh", "shell") == [[
        ("sm90", "file", "#SBATCH --gres=gpu:h100:8", "--gres=gpu:h100:8"),
        ("sm80 sm90", "file", "#SBATCH -C a100|h100", "-C 'a100|h100'"),
    ]]


def test_sbatch_lines_after_the_first_command_are_not_read():
    """Slurm stops reading directives at the first command."""
    text = "#!/bin/bash\nset -e\n#SBATCH --gres=gpu:h100:8\n" + LAUNCH + "\n"
    assert gpu_hints(text, "job.sh", "shell") == [[]]


@pytest.mark.parametrize("option, value, archs", [
    ("--gres", "gpu:h100:8", "sm90"), ("--gres", "gpu:nvidia_h100_80gb_hbm3:8,shard:2", "sm90"),
    ("--gpus", "b200:8", "sm100"), ("--gpus-per-node", "a100-80g:4", "sm80"), ("-G", "gb200:4", "sm100"),
    ("--constraint", "h100", "sm90"), ("--gres", "gpu:tesla:2", ""),
])
def test_slurm_gpu_requests(option, value, archs):
    got = [h.value for h in slurm_hints(option, value, None) if h.kind == "gpu"]
    assert got == [archs]


@pytest.mark.parametrize("option, value", [("--gres", "gpu:8"), ("--gpus", "8"), ("--constraint", "bigmem"),
                                           ("--constraint", "ib&h100&b200")])
def test_slurm_requests_without_a_gpu_type_say_nothing(option, value):
    assert slurm_hints(option, value, None) == []


def test_srun_options_on_the_launch_line_are_launch_evidence():
    text = "srun -N1 --gpus-per-node=b200:4 " + LAUNCH + "\n"
    assert gpu_hints(text, "run.sh", "shell") == [[
        ("sm100", "launch", "srun --gpus-per-node=b200:4", "--gpus-per-node=b200:4")]]


def test_sbatch_wrap_options_reach_the_wrapped_launch():
    text = f"sbatch --gres=gpu:h100:8 --wrap '{LAUNCH}'\n"
    assert [h[:3] for h in gpu_hints(text, "submit.sh", "shell")[0]] == [
        ("sm90", "launch", "sbatch --gres=gpu:h100:8")]


# ---------------------------------------------------------------------------
# Shell comments and guards


def test_a_comment_directly_above_or_on_a_launch_names_its_gpu():
    text = f"# 8x H100\n{LAUNCH}\n\n{LAUNCH}  # B200 only\n\n# B200\n\n{LAUNCH}\n"
    assert gpu_hints(text, "serve.sh", "shell") == [
        [("sm90", "launch", "comment '# 8x H100'", "# 8x H100")],
        [("sm100", "launch", "comment '# B200 only'", "# B200 only")],
        [],  # a blank line between: not directly above
    ]


def test_each_launch_of_a_chain_reads_its_own_last_line_each_time_it_is_read():
    # Both launches of the chain start where it starts (the comment above is both's), each ends on its own line
    # (the comment there is its alone); each is read once per loop item, the same comments each time.
    text = (f"for i in 1 2; do\n  # 8x H100\n  {LAUNCH} --port 1$i && \\\n    {LAUNCH} --port 2$i  # B200 only\n"
            f"done\n{LAUNCH}\n")
    above = ("sm90", "launch", "comment '# 8x H100'", "# 8x H100")
    on = ("sm100", "launch", "comment '# B200 only'", "# B200 only")
    assert gpu_hints(text, "serve.sh", "shell") == [[above], [above], [on, above], [on, above], []]


def test_a_branch_on_the_gpu_name_guards_the_values_it_sets():
    text = ("if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q B200; then KV=nvfp4; else KV=fp8_e4m3; fi\n"
            "python3 -m sglang.launch_server --model-path m --kv-cache-dtype $KV\n")
    got = gpu_hints(text, "pick.sh", "shell")
    assert [[(v, s) for v, s, _, _ in hs] for hs in got] == [[("sm100", "guard")], []]
    assert got[0][0][2].startswith("branch where `nvidia-smi --query-gpu=name")


def test_a_gpu_read_into_a_variable_guards_the_launches_of_each_branch():
    text = ('GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)\n'
            'if [[ "$GPU" == *B300* ]]; then\n  ' + LAUNCH + '\nelse\n  ' + LAUNCH + '\nfi\n'
            'case "$GPU" in\n  *H100*|*H200*) ' + LAUNCH + ' ;;\nesac\n')
    got = gpu_hints(text, "entry.sh", "shell")
    assert [[v for v, *_ in hs] for hs in got] == [["sm103"], ["!sm103"], ["sm90"]]
    assert got[1][0][2] == 'branch where `[[ "$GPU" == *B300* ]]` fails'


@pytest.mark.parametrize("branch, reason", [
    ('case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in\n  *B200*) {launch} ;;\nesac\n',
     'case where "$(nvidia-smi --query-gpu=n... matches *B200*'),
    ('if [[ "$(nvidia-smi --query-gpu=name --format=csv,noheader)" == *B200* ]]; then\n  {launch}\nfi\n',
     'branch where `[[ "$(nvidia-smi --query-gpu=name --format=csv,...` succeeds'),
])
def test_a_branch_on_the_gpu_query_itself_guards_its_launches(branch, reason):
    # No variable holds the GPU here: the test's operand is the query (Machine reads it while gpu_vars is empty).
    assert [[(v, s, r) for v, s, r, _ in hs] for hs in gpu_hints(branch.format(launch=LAUNCH), "g.sh", "shell")] \
        == [[("sm100", "guard", reason)]]


def test_the_same_test_guards_once_its_variable_reads_the_gpu_and_not_after_it_stops():
    """A script repeats its tests; the machine reads each once per state of the variables that read the GPU
    (Machine.test): the same text guards nothing before GPU is read from nvidia-smi, then guards, then not again
    once GPU is set to something else."""
    test = '[[ "$GPU" == *B300* ]]'
    text = (f"if {test}; then\n  {LAUNCH}\nfi\nGPU=$(nvidia-smi --query-gpu=name --format=csv,noheader)\n"
            f"if {test}; then\n  {LAUNCH}\nfi\nGPU=b300\nif {test}; then\n  {LAUNCH}\nfi\n")
    assert [[v for v, *_ in hs] for hs in gpu_hints(text, "entry.sh", "shell")] == [[], ["sm103"], []]


@pytest.mark.parametrize("assign, test, archs", [
    ("CC=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)", '[ "${CC%%.*}" -ge 10 ]',
     "sm100 sm103 sm110 sm120 sm121"),
    ("CC=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | tr -d '.')", '[[ "$CC" -eq 90 ]]', "sm90"),
    ("CC=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader)", '[[ "$CC" == "10.0" ]]', "sm100"),
    ('MAJOR=$(python3 -c "import torch; print(torch.cuda.get_device_capability()[0])")', "(( MAJOR == 12 ))",
     "sm120 sm121"),
    ("GPU=$(nvidia-smi -L)", 'echo "$GPU" | grep -qiE "b200|gb200"', "sm100"),
    ("GPU=$(nvidia-smi -L)", 'echo "$GPU" | g"r"e\\p -qi b200', "sm100"),  # grep as bash reads it, quoted
])
def test_compute_capability_and_name_guards(assign, test, archs):
    text = f"{assign}\nif {test}; then\n  {LAUNCH}\nfi\n"
    assert [v for v, *_ in gpu_hints(text, "g.sh", "shell")[0]] == [archs]


@pytest.mark.parametrize("test", [
    '[ "$X" = 1 ]', "nvidia-smi --query-gpu=memory.total --format=csv | grep -q 80", "grep -q B200 models.txt",
    "nvidia-smi | grep -q B200 && [ -n \"$FP4\" ]", '[[ "$GPU" == *B200* ]]',
])
def test_conditions_that_do_not_test_the_gpu_alone_guard_nothing(test):
    text = f"if {test}; then\n  {LAUNCH}\nfi\n"
    assert gpu_hints(text, "g.sh", "shell") == [[]]


def test_a_launch_on_two_paths_keeps_only_the_guards_both_share():
    text = "if nvidia-smi | grep -q B200; then Y=a; else Y=b; fi\n" + LAUNCH + " --port ${Y:+30000}\n"
    assert gpu_hints(text, "g.sh", "shell") == [[]]


# ---------------------------------------------------------------------------
# Kubernetes and task specs


POD = """spec:
  template:
    spec:
{placement}
      containers:
        - name: sglang
          command: ["python3", "-m", "sglang.launch_server", "--kv-cache-dtype", "nvfp4"]
"""


@pytest.mark.parametrize("placement, value, reason", [
    ("      nodeSelector:\n        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3", "sm90",
     "nodeSelector nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3"),
    ("      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-b200", "sm100",
     "nodeSelector cloud.google.com/gke-accelerator: nvidia-b200"),
    ("      nodeSelector:\n        beta.kubernetes.io/instance-type: p5.48xlarge", "sm90",
     "nodeSelector beta.kubernetes.io/instance-type: p5.48xlarge"),
    ("      nodeSelector:\n        nvidia.com/gpu.compute.major: \"10\"", "sm100 sm103",
     "nodeSelector nvidia.com/gpu.compute.major: 10"),
    ("      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
     "            nodeSelectorTerms:\n              - matchExpressions:\n"
     "                  - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-H100-80GB-HBM3, NVIDIA-H200]}",
     "sm90", "node affinity nvidia.com/gpu.product In [NVIDIA-H100-80GB-HBM3, NVIDIA-H200]"),
    ("      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
     "            nodeSelectorTerms:\n              - matchExpressions:\n"
     "                  - {key: nvidia.com/gpu.product, operator: NotIn, values: [NVIDIA-B200]}",
     "!sm100", "node affinity nvidia.com/gpu.product NotIn [NVIDIA-B200]"),
    ("      nodeSelector:\n        nvidia.com/gpu.product: Quadro-RTX-6000", "",
     "nodeSelector nvidia.com/gpu.product: Quadro-RTX-6000"),
])
def test_kubernetes_node_selection(placement, value, reason):
    ((got,),) = gpu_hints(POD.format(placement=placement), "deploy.yaml", "yaml")
    assert got[:3] == (value, "launch", reason)


def test_node_affinity_terms_are_ored_and_a_term_without_a_gpu_lets_any_node_in():
    two = ("      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
           "            nodeSelectorTerms:\n"
           "              - matchExpressions: [{key: cloud.google.com/gke-accelerator, operator: In,"
           " values: [nvidia-h100-80gb]}]\n"
           "              - matchExpressions: [{key: cloud.google.com/gke-accelerator, operator: In,"
           " values: [nvidia-b200]}]")
    assert [v for v, *_ in gpu_hints(POD.format(placement=two), "d.yaml", "yaml")[0]] == ["sm90 sm100"]
    any_node = two.rsplit("\n", 1)[0] + "\n              - matchExpressions: [{key: zone, operator: In, values: [a]}]"
    assert gpu_hints(POD.format(placement=any_node), "d.yaml", "yaml") == [[]]
    preferred = two.replace("requiredDuringScheduling", "preferredDuringScheduling")
    assert gpu_hints(POD.format(placement=preferred), "d.yaml", "yaml") == [[]]


def test_a_runtime_affinity_reaches_the_runner_below_it():
    text = ("spec:\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
            "        nodeSelectorTerms:\n          - matchExpressions:\n"
            "              - {key: node.kubernetes.io/instance-type, operator: In,"
            " values: [BM.GPU.A100-v2.8, BM.GPU.H100.8]}\n"
            "  engineConfig:\n    runner:\n      image: lmsysorg/sglang:v0.5.23\n"
            "      command: [python3, -m, sglang.launch_server, --kv-cache-dtype, nvfp4]\n")
    assert [v for v, *_ in gpu_hints(text, "rt.yaml", "yaml")[0]] == ["sm80 sm90"]


def test_kubernetes_json_reads_the_same_node_selection():
    text = ('{"spec": {"nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}, "containers": '
            '[{"command": ["python3", "-m", "sglang.launch_server", "--kv-cache-dtype", "nvfp4"]}]}}')
    assert gpu_hints(text, "pod.json", "json") == [[
        ("sm90", "launch", "nodeSelector cloud.google.com/gke-accelerator: nvidia-h100-80gb",
         '"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"')]]


@pytest.mark.parametrize("resources, value", [
    ("  accelerators: {H100:8, B200:8}", "sm90 sm100"), ("  gpus: H100:8", "sm90"),
    ("  any_of:\n    - accelerators: H100:8\n    - accelerators: H200:8", "sm90"),
    ("  gpu: A100:80GB:8", "sm80"), ("  gpu: nvidia:B200:8", "sm100"), ("  gpu:\n    name: [H100, H200]", "sm90"),
])
def test_task_resources(resources, value):
    text = f"resources:\n{resources}\nrun: |\n  {LAUNCH}\n"
    assert [v for v, *_ in gpu_hints(text, "task.yaml", "yaml")[0]] == [value]


@pytest.mark.parametrize("resources", ["  gpu: 80GB:8", "  gpu: 1..8", "  gpu: 24GB"])
def test_task_resources_without_a_gpu_name_say_nothing(resources):
    text = f"resources:\n{resources}\nrun: |\n  {LAUNCH}\n"
    assert gpu_hints(text, "task.yaml", "yaml") == [[]]


def test_a_runpod_pod_names_its_gpu_types():
    text = ('{"imageName": "lmsysorg/sglang:v0.5.23", "gpuTypeIds": ["NVIDIA H100 80GB HBM3", "NVIDIA B200"], '
            '"dockerEntrypoint": ["python3", "-m", "sglang.launch_server"], "dockerStartCmd": ["--kv-cache-dtype", '
            '"nvfp4"]}')
    assert [v for v, *_ in gpu_hints(text, "pod.json", "json")[0]] == ["sm90 sm100"]


# ---------------------------------------------------------------------------
# Python


MODAL = """import subprocess
import modal

app = modal.App("x")
GPU = "H100:8"

{decorator}
def serve():
    subprocess.Popen(["python3", "-m", "sglang.launch_server", "--kv-cache-dtype", "nvfp4"])
"""


@pytest.mark.parametrize("decorator, value, reason", [
    ("@app.function(gpu=GPU)", "sm90", "Modal function(gpu=GPU) = H100:8"),
    ('@app.function(gpu=["B200", "H200"])', "sm90 sm100", 'Modal function(gpu=["B200", "H200"])'),
    ("@app.function(gpu=modal.gpu.B200(count=8))", "sm100", "Modal function(gpu=modal.gpu.B200(count=8)) = B200"),
    ('@ray.remote(num_gpus=8, accelerator_type="A100-80G")', "sm80", 'Ray accelerator_type="A100-80G"'),
    ("@ray.remote(accelerator_type=NVIDIA_TESLA_V100)", "sm70", "Ray accelerator_type=NVIDIA_TESLA_V100"),
    ('@ray.remote(resources={"accelerator_type:H100": 0.001})', "sm90",
     "Ray resources {'accelerator_type:H100': ...}"),
])
def test_the_scheduler_the_launching_function_asks(decorator, value, reason):
    ((got,),) = gpu_hints(MODAL.format(decorator=decorator), "app.py", "python")
    assert got[:3] == (value, "launch", reason)


def test_modal_any_gpu_says_nothing():
    assert gpu_hints(MODAL.format(decorator='@app.function(gpu="any")'), "app.py", "python") == [[]]


GUARD = """import subprocess
import torch
from sglang.srt.utils import is_sm100_supported

{setup}
if {test}:
    subprocess.run(["python3", "-m", "sglang.launch_server", "--kv-cache-dtype", "nvfp4"])
else:
    subprocess.run(["python3", "-m", "sglang.launch_server", "--kv-cache-dtype", "fp8_e4m3"])
"""


@pytest.mark.parametrize("setup, test, on", [
    ("", "torch.cuda.get_device_capability()[0] >= 10", "sm100 sm103 sm110 sm120 sm121"),
    ("", "torch.cuda.get_device_capability() == (9, 0)", "sm90"),
    ("", '"B200" in torch.cuda.get_device_name()', "sm100"),
    ("major, minor = torch.cuda.get_device_capability()", "major == 10", "sm100 sm103"),
    ("cap = torch.cuda.get_device_capability()", "cap >= (12, 0)", "sm120 sm121"),
    ("blackwell = torch.cuda.get_device_capability()[0] in (10, 12)", "blackwell", None),
    ("", "is_sm100_supported()", "sm100 sm103"),
])
def test_python_branches_on_the_gpu(setup, test, on):
    got = gpu_hints(GUARD.format(setup=setup, test=test), "serve.py", "python")
    if on is None:
        assert got == [[], []]
        return
    then, other = ([(v, s) for v, s, *_ in hs] for hs in got)
    assert then == [(on, "guard")]
    complement = on[1:] if on.startswith("!") else "!" + on
    assert other in ([(complement, "guard")], [])  # a name test's else may be no evidence (an H200 is no H100)


def test_a_name_test_guards_only_where_it_is_exact():
    """Not an H100 may be an H200: that branch names no arch; the other is an H100's (sm90)."""
    text = GUARD.format(setup="", test='not "h100" in torch.cuda.get_device_name(0).lower()')
    assert [[v for v, *_ in hs] for hs in gpu_hints(text, "serve.py", "python")] == [[], ["sm90"]]


def test_a_skip_decorator_guards_the_class_it_is_on():
    text = ("import unittest\nfrom sglang.srt.utils import is_blackwell\nfrom sglang.test.test_utils import "
            "popen_launch_server\n\n@unittest.skipIf(not is_blackwell(), 'needs Blackwell')\n"
            "class T(unittest.TestCase):\n"
            "    def test(self):\n        popen_launch_server('m', 'u', other_args=['--kv-cache-dtype', 'nvfp4'])\n")
    assert gpu_hints(text, "test_x.py", "python") == [[
        ("sm100 sm103 sm110 sm120 sm121", "guard", "skipIf(not is_blackwell())",
         "@unittest.skipIf(not is_blackwell(), 'needs Blackwell')"[1:])]]


# ---------------------------------------------------------------------------
# Documents


def test_a_heading_applies_until_the_next_heading_of_its_level():
    text = ("# Serve\n\n## B200\n\n### Step 1\n\n```bash\n" + LAUNCH + "\n```\n\n## H100 vs B200\n\n```bash\n"
            + LAUNCH + "\n```\n\n## Notes\n\n```bash\n" + LAUNCH + "\n```\n")
    assert gpu_hints(text, "serve.md", "markdown") == [
        [("sm100", "section", "heading '## B200'", "## B200")], [], []]


def test_the_nearest_section_that_names_a_gpu_decides():
    text = "## Blackwell\n\n### GB300\n\n```bash\n" + LAUNCH + "\n```\n"
    assert [v for v, *_ in gpu_hints(text, "x.md", "markdown")[0]] == ["sm103"]


@pytest.mark.parametrize("page, path, reason", [
    ('<Tabs>\n  <TabItem value="b200" label="B200">\n\n```bash\n' + LAUNCH + '\n```\n\n  </TabItem>\n</Tabs>\n',
     "x.mdx", "tab '<TabItem value=\"b200\" label=\"B200\">'"),
    ('=== "B200"\n\n    ```bash\n    ' + LAUNCH + '\n    ```\n', "x.md", "tab '=== \"B200\"'"),
    ('!!! note "B200 only"\n\n    ```bash\n    ' + LAUNCH + '\n    ```\n', "x.md",
     "admonition '!!! note \"B200 only\"'"),
    (':::tip[B200]\n\n```bash\n' + LAUNCH + '\n```\n\n:::\n', "x.md", "admonition ':::tip[B200]'"),
    (':::{tab-item} B200\n\n```bash\n' + LAUNCH + '\n```\n\n:::\n', "x.md", "tab ':::{tab-item} B200'"),
    ('.. tab:: B200\n\n   .. code-block:: bash\n\n      ' + LAUNCH + '\n', "x.rst", "tab '.. tab:: B200'"),
    ('Serving\n=======\n\nB200\n----\n\n.. code-block:: bash\n\n   ' + LAUNCH + '\n', "x.rst", "heading 'B200'"),
])
def test_tabs_and_admonition_titles(page, path, reason):
    ((got,),) = gpu_hints(page, path, "markdown")
    assert got[:3] == ("sm100", "section", reason)


def test_fences_in_mkdocs_tabs_are_read_at_all():
    """An indented tab body was an indented code block to CommonMark: its fences were never scanned."""
    text = '=== "One"\n\n    ```bash\n    ' + LAUNCH + '\n    ```\n\n=== "Two"\n\n    Text\n\n    ```bash\n    ' + \
        LAUNCH + '\n    ```\n'
    result = scan("x.md", text, "markdown")
    assert [text[launch.span.start:launch.span.end] for launch in result.launches] == [LAUNCH] * 2


def test_a_lead_in_names_a_candidate_set_and_is_nearer_than_a_heading():
    text = ("## B200\n\nDeploy Kimi-K2.5 with the following command (H200/H100, all features enabled):\n\n```bash\n"
            + LAUNCH + "\n```\n\nOr, unlike on H100, run this on B200:\n\n```bash\n" + LAUNCH + "\n```\n")
    got = gpu_hints(text, "x.md", "markdown")
    assert got[0] == [("sm90", "section", "lead-in '...wing command (H200/H100, all features enabled):'",
                       "Deploy Kimi-K2.5 with the following command (H200/H100, all features enabled):")]
    assert [v for v, *_ in got[1]] == ["sm100"]  # the hedged lead-in names nothing: the heading decides


def test_a_lead_in_naming_a_family_under_a_tab_naming_a_gpu_is_that_gpu():
    """SGLang's cookbook pages: "FP4 KV cache (Blackwell):" under a B200 tab runs on the B200, not on every
    Blackwell (Thor refuses an nvfp4 KV cache); a lead-in the tab does not agree with names its own GPUs."""
    tab = ('<Tabs>\n  <TabItem value="b200" label="B200">\n\n{}:\n\n```bash\n' + LAUNCH
           + '\n```\n\n  </TabItem>\n</Tabs>\n')
    ((got,),) = gpu_hints(tab.format("FP4 KV cache (Blackwell)"), "x.mdx", "markdown")
    assert got[:3] == ("sm100", "section", "lead-in 'FP4 KV cache (Blackwell):' under tab "
                                           "'<TabItem value=\"b200\" label=\"B200\">'")
    ((got,),) = gpu_hints(tab.format("On the H200"), "x.mdx", "markdown")
    assert got[:3] == ("sm90", "section", "lead-in 'On the H200:'")


def test_prose_names_nothing():
    text = "Verified on H100 and B200.\n\n```bash\n" + LAUNCH + "\n```\n"
    assert gpu_hints(text, "x.md", "markdown") == [[]]


def test_a_section_on_another_platform_than_the_launch_says_nothing():
    text = ("## H100\n\n```bash\ndocker run --device /dev/kfd lmsysorg/sglang:v0.5.23-rocm700-mi30x " + LAUNCH
            + "\n```\n")
    assert gpu_hints(text, "x.md", "markdown") == [[]]
    assert platforms(text, "x.md", "markdown") == [["rocm", "rocm"]]


def test_a_vendor_tab_names_the_platform():
    text = '=== "AMD"\n\n    ```bash\n    ' + LAUNCH + '\n    ```\n'
    assert platforms(text, "x.md", "markdown") == [["rocm"]]


# ---------------------------------------------------------------------------
# File and folder names


@pytest.mark.parametrize("path, value, reason", [
    ("benchmarks/single_node/dsr1_fp4_b200.sh", "sm100", "file name dsr1_fp4_b200.sh"),
    ("recipes/b200-fp4/serve.sh", "sm100", "folder b200-fp4/"),
    ("recipes/gb300/common/serve.sh", "sm103", "folder gb300/"),
    ("docs/basic_usage/deepseek_v4_nvfp4_sm90.md", "sm90", "file name deepseek_v4_nvfp4_sm90.md"),
])
def test_a_file_or_folder_name_is_file_evidence(path, value, reason):
    (hint,) = [h for h in path_hints(path) if h.kind == "gpu"]
    assert (hint.value, hint.scope, hint.reason, hint.span) == (value, "file", reason, None)


@pytest.mark.parametrize("path", ["h100_vs_b200.sh", "serve_l4.sh", "a/b/c/d/serve.sh", "v0.5.10/serve.sh",
                                  "spark/jobs/serve.sh", "<stdin>"])
def test_names_that_say_nothing(path):
    assert path_hints(path) == []


def test_the_name_reaches_the_launch_after_the_parse_cache(tmp_path):
    """The cache keys on the text: the same text under another name must not keep the first name's GPU."""
    from kv4lint.cli import main
    import json
    out = tmp_path / "out.json"
    for name in ("serve_h100.sh", "serve_b200.sh"):
        (tmp_path / name).write_text(LAUNCH + "\n")
    main(["check", "--format", "json", "--cache-dir", str(tmp_path / "cache"), "--sglang-version", "0.5.23",
          "--jobs", "1", str(tmp_path / "serve_h100.sh"), str(tmp_path / "serve_b200.sh"), "--output-file", str(out)])
    found = json.loads(out.read_text())["findings"]
    assert sorted({(f["path"].rsplit("/", 1)[-1], f["severity"]) for f in found}) == [("serve_h100.sh", "error")]


# ---------------------------------------------------------------------------
# Cost: reading the machine stays linear in the input


def _page_of_sections(n: int) -> str:
    """A long cookbook page: a heading, a tab and a fenced launch per model, some nested, under one top heading."""
    parts = ["# Models\n"]
    for k in range(n):
        parts.append("".join(f"#### Note {k}.{j}\n\n" for j in range(20)))  # sections without launches
        parts.append(f"## Model {k}\n\n### H100\n\n<Tabs>\n<TabItem label=\"B200\">\n\n```bash\n{LAUNCH}\n```\n\n"
                     f"</TabItem>\n</Tabs>\n\nDeploy it (H200):\n\n```bash\n{LAUNCH}\n```\n")
    return "\n".join(parts)


def _nested_containers(n: int) -> str:
    """MkDocs tabs nested as deep as they go, many times over, and unclosed tabs (hostile)."""
    pad = "    " * 12
    tabs = "".join(f"{'    ' * d}=== \"B200 {d}\"\n\n" for d in range(12))
    block = tabs + pad + f"```bash\n{pad}{LAUNCH}\n{pad}```\n\n"
    return block * n + "<Tab label=\"H100\">\n" * n + "</TabItem>\n" * n


def _script_of_guards(n: int) -> str:
    parts = ["#!/bin/bash\n#SBATCH --gres=gpu:h100:8\nGPU=$(nvidia-smi --query-gpu=name --format=csv,noheader)\n"]
    for k in range(n):
        parts.append(f"# 8x H100\nif [[ \"$GPU\" == *B200* ]]; then KV{k}=nvfp4; else KV{k}=fp8_e4m3; fi\n"
                     f"{LAUNCH.replace('nvfp4', '$KV' + str(k))} --port {k}\n")
    return "".join(parts)


def _sections_of(text: str) -> int:
    """The section machinery alone: every block of a page asks for the sections around it."""
    from kv4lint.base.source import LineIndex
    from kv4lint.frontends import sections
    from kv4lint.frontends.markdown import Outline, markdown_blocks

    outline, index = Outline(), LineIndex(text)
    blocks = markdown_blocks(text, None, outline)
    around = sections.Around(sections.headings(index, outline.headings, len(index.starts)) +
                             sections.containers(index, outline.code.__contains__))
    return sum(len(around.at(b.line, sections.lead_in(index, b.line - 1))) for b in blocks)


def _many_sections(n: str) -> int:
    """``n`` sibling sections, each with a nested one, and a block asking in each: the sweep's own cost."""
    from kv4lint.base.model import Span
    from kv4lint.frontends import sections

    k = int(n)
    found = [sections.Section(4 * i + 1, 4 * i + 3, "heading", "B200", "## B200", Span(0, 0), 2) for i in range(k)]
    found += [sections.Section(4 * i + 2, 4 * i + 3, "heading", "Notes", "### Notes", Span(0, 0), 3) for i in range(k)]
    around = sections.Around(found)
    return sum(len(around.at(4 * i + 3)) for i in range(k))


@pytest.mark.slow
def test_finding_the_sections_of_every_block_is_linear():
    from linear_cost import assert_linear
    assert _sections_of(_page_of_sections(2)) == 8  # each block: a gpu and a platform hint
    assert _many_sections("3") == 6
    assert_linear(lambda n: str(n), _many_sections, 2500, what="sections around many blocks")


@pytest.mark.slow
@pytest.mark.parametrize("make, language, n", [(_page_of_sections, "markdown", 300),
                                               (_nested_containers, "markdown", 100),
                                               (_script_of_guards, "shell", 60)])
def test_reading_the_machine_is_linear(make, language, n):
    """The frontends read the machine (the rules' cost per launch is measured elsewhere)."""
    from linear_cost import assert_linear
    path = "input.md" if language == "markdown" else "input.sh"
    assert_linear(make, lambda text: scan(path, text, language), n)
