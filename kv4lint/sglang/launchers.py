"""Launchers that build SGLang's command from settings: the images whose program reads environment variables
and turns them into server options, as each launcher's documented schema maps them; and launch profiles that
hold the command as data, an executable list beside argument lists (:func:`profile_arg_key`).

A container of such an image runs ``python3 -m sglang.launch_server`` with the options its environment selects:
the environment (compose ``environment:``, a Kubernetes container's ``env``, a Dockerfile's ``ENV`` on top of the
image, a deployment template's ``env`` list) is the launch.  Only the mappings below are known; a launcher image
kv4lint does not know is no launch, and neither is a variable outside its mapping.

A leaf: every reader (the YAML, Dockerfile and JSON frontends, and the image hints) imports this one table.
"""

from __future__ import annotations

import re

# The words a truthy flag variable takes (RunPod: ``os.getenv(flag, "").lower() in ("true", "1", "yes")``).
TRUTHY = ("true", "1", "yes")


class EnvLauncher:
    """One launcher: ``name`` as users call it; ``images``, the image names (registry and tag left out) that run
    it; ``prefix``, the words it starts the server with; ``options``, variable -> server option (the value
    follows the option); ``flags``, variables that add their option (``--name-in-kebab-case``) when truthy;
    ``lists``, variables whose value is split on commas, one option word per item."""

    __slots__ = ("name", "images", "prefix", "options", "flags", "lists")

    def __init__(self, name: str, images: tuple[str, ...], prefix: tuple[str, ...], options: dict[str, str],
                 flags: tuple[str, ...], lists: tuple[str, ...] = ()):
        self.name = name
        self.images = images
        self.prefix = prefix
        self.options = options
        self.flags = flags
        self.lists = lists

    def flag(self, variable: str) -> str:
        return "--" + variable.lower().replace("_", "-")


# RunPod's serverless SGLang worker (github.com/runpod-workers/worker-sglang, engine.py ``SGlangEngine``): its
# documented variables (README, .runpod/hub.json), the union of its releases (MODEL_PATH became MODEL_NAME;
# TENSOR_PARALLEL_SIZE gives --tensor-parallel-size, later --tp-size: the same option), in the order it adds them.
RUNPOD_WORKER = EnvLauncher(
    "RunPod worker-sglang", ("runpod/worker-sglang",), ("python3", "-m", "sglang.launch_server"),
    {
        "HOST": "--host", "PORT": "--port",
        "MODEL_NAME": "--model-path", "MODEL_PATH": "--model-path", "TOKENIZER_PATH": "--tokenizer-path",
        "TOKENIZER_MODE": "--tokenizer-mode", "LOAD_FORMAT": "--load-format", "DTYPE": "--dtype",
        "CONTEXT_LENGTH": "--context-length", "QUANTIZATION": "--quantization",
        "SERVED_MODEL_NAME": "--served-model-name", "CHAT_TEMPLATE": "--chat-template",
        "JSON_MODEL_OVERRIDE_ARGS": "--json-model-override-args", "MEM_FRACTION_STATIC": "--mem-fraction-static",
        "MAX_RUNNING_REQUESTS": "--max-running-requests", "MAX_TOTAL_TOKENS": "--max-total-tokens",
        "CHUNKED_PREFILL_SIZE": "--chunked-prefill-size", "MAX_PREFILL_TOKENS": "--max-prefill-tokens",
        "SCHEDULE_POLICY": "--schedule-policy", "SCHEDULE_CONSERVATIVENESS": "--schedule-conservativeness",
        "KV_CACHE_DTYPE": "--kv-cache-dtype", "TENSOR_PARALLEL_SIZE": "--tensor-parallel-size",
        "DATA_PARALLEL_SIZE": "--data-parallel-size", "PIPELINE_PARALLEL_SIZE": "--pipeline-parallel-size",
        "EXPERT_PARALLEL_SIZE": "--expert-parallel-size", "LOAD_BALANCE_METHOD": "--load-balance-method",
        "SPECULATIVE_ALGORITHM": "--speculative-algorithm",
        "SPECULATIVE_DRAFT_MODEL_PATH": "--speculative-draft-model-path",
        "SPECULATIVE_NUM_STEPS": "--speculative-num-steps", "SPECULATIVE_EAGLE_TOPK": "--speculative-eagle-topk",
        "SPECULATIVE_NUM_DRAFT_TOKENS": "--speculative-num-draft-tokens", "LORA_PATHS": "--lora-paths",
        "DSA_PREFILL_BACKEND": "--dsa-prefill-backend", "DSA_DECODE_BACKEND": "--dsa-decode-backend",
        "NSA_PREFILL_BACKEND": "--nsa-prefill-backend", "NSA_DECODE_BACKEND": "--nsa-decode-backend",
        "CUDA_GRAPH_BACKEND_DECODE": "--cuda-graph-backend-decode",
        "CUDA_GRAPH_BACKEND_PREFILL": "--cuda-graph-backend-prefill",
        "ATTENTION_BACKEND": "--attention-backend", "PREFILL_ATTENTION_BACKEND": "--prefill-attention-backend",
        "DECODE_ATTENTION_BACKEND": "--decode-attention-backend", "SAMPLING_BACKEND": "--sampling-backend",
        "MOE_RUNNER_BACKEND": "--moe-runner-backend", "MOE_A2A_BACKEND": "--moe-a2a-backend",
        "TOOL_CALL_PARSER": "--tool-call-parser", "REASONING_PARSER": "--reasoning-parser",
        "STREAM_INTERVAL": "--stream-interval", "RANDOM_SEED": "--random-seed", "LOG_LEVEL": "--log-level",
        "LOG_LEVEL_HTTP": "--log-level-http", "API_KEY": "--api-key", "FILE_STORAGE_PATH": "--file-storage-path",
    },
    ("SKIP_TOKENIZER_INIT", "TRUST_REMOTE_CODE", "LOG_REQUESTS", "SHOW_TIME_COST", "DISABLE_RADIX_CACHE",
     "DISABLE_CUDA_GRAPH", "DISABLE_OUTLINES_DISK_CACHE", "ENABLE_TORCH_COMPILE", "ENABLE_P2P_CHECK",
     "ENABLE_FLASHINFER_MLA", "TRITON_ATTENTION_REDUCE_IN_FP32", "ENABLE_MIXED_CHUNK", "ENABLE_DP_ATTENTION",
     "ENABLE_METRICS", "ENABLE_CACHE_REPORT"),
    ("LORA_PATHS",),
)

ENV_LAUNCHERS: tuple[EnvLauncher, ...] = (RUNPOD_WORKER,)

# For the pre-filter: a file that names a launcher's image and sets its KV cache variable (or reads an env file
# that may) can hold such a launch.
LAUNCHER_IMAGES = tuple(name.rsplit("/", 1)[-1] for la in ENV_LAUNCHERS for name in la.images)
LAUNCHER_KV_SETTINGS = tuple(dict.fromkeys(
    var for la in ENV_LAUNCHERS for var, opt in la.options.items() if opt == "--kv-cache-dtype")) + ("env_file",)


def image_name(image: str) -> str:
    """An image reference's name without registry host, tag and digest: ``docker.io/runpod/worker-sglang:1.0``
    -> ``runpod/worker-sglang``."""
    ref = image.strip().split("@", 1)[0]
    last = ref.rsplit("/", 1)
    if ":" in last[-1]:
        ref = ref[:ref.rfind(":")]
    parts = ref.split("/")
    if len(parts) > 2 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]
    if parts and parts[0] == "library":
        parts = parts[1:]
    return "/".join(parts).lower()


def env_launcher(image: str | None) -> EnvLauncher | None:
    """The launcher an image runs, or None (an image kv4lint does not know as a launcher)."""
    if not image or "$" in image:
        return None
    name = image_name(image)
    return next((la for la in ENV_LAUNCHERS if name in la.images), None)


# Launch profiles (JSON or YAML): a mapping whose value under one key is the server's command as a list
# (``"server_executable": ["python3", "-m", "sglang.launch_server"]``, ``"command": [...]``) and whose lists under
# keys named for arguments (``base_args``, ``extra_args``, ``server_args``, ``args``) follow it, in the order
# written.  A list named for another program's arguments (a client, a benchmark) is not the server's.
_PROFILE_ARGS = re.compile(r"(?:^|[_-])(?:args|arguments|argv|flags)$", re.I)
_NOT_SERVER_ARGS = ("client", "bench", "eval", "request", "test", "env")


def profile_arg_key(key: str) -> bool:
    """Whether a profile's list under ``key`` is more of the server's arguments."""
    low = key.lower()
    return bool(_PROFILE_ARGS.search(key)) and not any(w in low for w in _NOT_SERVER_ARGS)
