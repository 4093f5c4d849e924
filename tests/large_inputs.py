"""Generators of large inputs shaped like real files, for the linear-cost tests and the bench (issues 34, 37).

Each takes a size ``n`` (blocks of the file's own shape) and returns the text; doubling ``n`` doubles the text.
Nothing here is a copy of a third-party file: the shapes are modelled on public ones.

- :func:`install_script`: an installer script shaped like RLinf's ``requirements/install.sh`` (3,125 lines): globals
  with comments, an option loop, per-platform configuration with command substitutions that call helpers, and
  one installer function per model (``n`` of them) that call shared helpers (create a venv, install uv, clone a
  repository, build a wheel) from a ``main`` that dispatches on the target and the model. It names sglang (an
  engine to install) and launches nothing.
- :func:`launch_script`: a serving script of ``n`` blocks, each settings, a knob, a here-document and a launch.
- :func:`short_lines`: ``n`` lines of ``echo`` under a comment that names sglang and a KV cache option.
- :func:`python_launches`: a module of ``n`` launcher functions building an argv list and running it.
- :func:`elif_chain`: a Python ``if``/``elif`` chain of ``n`` arms choosing the KV cache dtype of one launch.
"""

from __future__ import annotations

_INSTALLER = '''
install_{name}_model() {{
    # {name}: its own venv, its repository and the shared embodied dependencies.
    local repo_dir branch="v{k}" torch_pin
    [ "$USE_MIRRORS" -eq 1 ] && branch="mirror-v{k}"
    [ "$TEST_BUILD" -eq 1 ] && branch="main"
    create_and_sync_venv
    repo_dir=$(clone_or_reuse_repo {upper}_PATH "$VENV_DIR/{name}" https://github.com/example/{name}.git -b "$branch")
    torch_pin=$(derive_torch_pin "${{TORCH_VERSION:-2.7.1}}" "${{EXTRA_INDEX_{k}}}" "${{MIRROR_{k}}}")
    uv pip install $torch_pin
    uv pip install -e "$repo_dir" $NO_INSTALL_RLINF_CMD --config-settings="--build-option=--headless"
    if [ "$ENV_NAME" = "maniskill_libero" ] || [ "$ENV_NAME" = "libero" ]; then
        install_common_embodied_deps
        uv pip install "{name}-extras==0.{k}.0"
    elif [ -n "$ENV_NAME" ]; then
        echo "[install.sh] {name} does not support $ENV_NAME" >&2
        exit 1
    fi
    case "$PLATFORM" in
        nvidia) install_flash_attn ;;
        amd) echo "[install.sh] skipping flash-attn for {name} on ROCm" ;;
        *) ;;
    esac
    echo "export {upper}_HOME=$repo_dir" >> "$VENV_DIR/bin/activate"
    uv pip uninstall pynvml || true
}}

configure_{name}() {{
    # Per-model torch and index pins, from the platform and what the user asked for.
    local tv
    case "$PLATFORM:$TORCH_VERSION" in
        nvidia:2.6*) tv="2.6.0"; EXTRA_INDEX_{k}="cu124" ;;
        nvidia:2.7*) tv="2.7.1"; EXTRA_INDEX_{k}="cu126" ;;
        amd:*) tv="2.7.1"; EXTRA_INDEX_{k}="rocm${{ROCM_VERSION}}" ;;
        *) tv="${{TORCH_VERSION:-2.7.1}}"; EXTRA_INDEX_{k}="" ;;
    esac
    if [ "$USE_MIRRORS" -eq 1 ]; then
        MIRROR_{k}="https://mirrors.example.org/{name}"
    else
        MIRROR_{k}="https://download.example.org/{name}"
    fi
    TORCH_PIN_{k}=$(derive_torch_pin "$tv" "$EXTRA_INDEX_{k}" "$MIRROR_{k}")
    [ -n "$ENGINE" ] && ENGINE_PIN_{k}="$ENGINE==${{SGLANG_VERSION:-0.5.4}}"
    echo "[install.sh] {name}: torch $tv from ${{MIRROR_{k}}} (${{EXTRA_INDEX_{k}:-default index}})"
}}

install_{name}_env() {{
    local env_dir
    case "$ENV_NAME" in
        maniskill_libero|libero)
            env_dir=$(clone_or_reuse_repo LIBERO_PATH "$VENV_DIR/libero" https://github.com/example/libero.git)
            uv pip install -e "$env_dir"
            ;;
        behavior)
            if [ "$PLATFORM" != "nvidia" ]; then
                echo "[install.sh] behavior needs an NVIDIA GPU" >&2
                exit 1
            fi
            uv pip install "omnigibson==1.{k}.0"
            ;;
        *) echo "[install.sh] no environment for {name}" ;;
    esac
}}
'''

_INSTALL_HEAD = '''#! /bin/bash

set -eo pipefail

TARGET=""
MODEL=""
ENV_NAME=""
VENV_DIR=".venv"
PYTHON_VERSION="3.11.14"
TORCH_VERSION=""
SGLANG_VERSION=""
ENGINE=""
PLATFORM="nvidia"
ROCM_VERSION=""
USE_MIRRORS=0
NO_ROOT=0
TEST_BUILD=0
NO_INSTALL_RLINF_CMD="--no-install-project"
# Set per platform by configure_<platform>: the wheel index and the packages routed through it.
PLATFORM_TORCH_INDEX=""
PLATFORM_TORCH_PACKAGES=()
SUPPORTED_TARGETS=("embodied" "agentic" "docs")
SUPPORTED_ENGINES=("sglang" "vllm")
SUPPORTED_MODELS=({models})
SUPPORTED_ENVS=("maniskill_libero" "libero" "behavior" "metaworld")

print_help() {{
        cat <<EOF
Usage: bash install.sh <target> [options]
    --model <name>         Embodied model to install: ${{SUPPORTED_MODELS[*]}}.
    --engine <name>        Rollout engine for target=agentic: ${{SUPPORTED_ENGINES[*]}} (default: sglang).
    --sglang <version>     Override sglang version (e.g., 0.5.4).
EOF
}}

parse_args() {{
    while [ "$#" -gt 0 ]; do
        case "$1" in
            -h|--help) print_help; exit 0 ;;
            --venv) VENV_DIR="$2"; shift 2 ;;
            --model) MODEL="$2"; shift 2 ;;
            --env) ENV_NAME="$2"; shift 2 ;;
            --torch) TORCH_VERSION="$2"; shift 2 ;;
            --sglang) SGLANG_VERSION="$2"; shift 2 ;;
            --engine) ENGINE="$2"; shift 2 ;;
            --platform) PLATFORM="$2"; shift 2 ;;
            --rocm) ROCM_VERSION="$2"; shift 2 ;;
            --use-mirror) USE_MIRRORS=1; shift ;;
            --no-root) NO_ROOT=1; shift ;;
            embodied|agentic|docs) TARGET="$1"; shift ;;
            *) echo "Unknown argument: $1" >&2; exit 1 ;;
        esac
    done
    if [ -z "$TARGET" ]; then
        TARGET="embodied"
    fi
}}

detect_cuda_major_minor() {{
    local mm
    if mm=$(python - <<'EOF' 2>/dev/null
import torch, sys
v = torch.version.cuda
if v is None:
    sys.exit(1)
print(v.split(".")[0], v.split(".")[1])
EOF
    ); then
        echo "$mm"
        return 0
    fi
    local nvcc_exe=""
    if command -v nvcc &>/dev/null; then
        nvcc_exe=$(command -v nvcc)
    elif [ -x /usr/local/cuda/bin/nvcc ]; then
        nvcc_exe="/usr/local/cuda/bin/nvcc"
    fi
    [ -z "$nvcc_exe" ] && return 1
    local ver
    ver=$("$nvcc_exe" --version | grep 'Cuda compilation tools' | awk '{{print $5}}' | tr -d ',')
    [ -z "$ver" ] && return 1
    echo "${{ver%%.*}} ${{ver#*.}}"
}}

detect_rocm_version() {{
    local raw=""
    if [ -f /opt/rocm/.info/version ]; then
        raw=$(head -n1 /opt/rocm/.info/version 2>/dev/null)
    fi
    if [ -z "$raw" ] && command -v hipconfig &>/dev/null; then
        raw=$(hipconfig --version 2>/dev/null | head -n1)
    fi
    [ -z "$raw" ] && return 1
    local mm
    mm=$(echo "$raw" | grep -oE '[0-9]+\\.[0-9]+' | head -n1)
    [ -z "$mm" ] && return 1
    echo "$mm"
}}

configure_nvidia() {{
    local _cmm _cmaj _cmin _cuda_tag
    if _cmm=$(detect_cuda_major_minor); then
        read -r _cmaj _cmin <<< "$_cmm"
        _cuda_tag="cu${{_cmaj}}${{_cmin}}"
        PLATFORM_TORCH_INDEX="https://download.pytorch.org/whl/${{_cuda_tag}}"
        PLATFORM_TORCH_PACKAGES=("torch" "torchvision" "torchaudio")
        export UV_TORCH_BACKEND="$_cuda_tag"
        echo "[install.sh] CUDA ${{_cmaj}}.${{_cmin}}: torch from ${{PLATFORM_TORCH_INDEX}}"
    else
        echo "[install.sh] no CUDA found; torch from the default index" >&2
    fi
}}

configure_amd() {{
    if [ -z "$ROCM_VERSION" ]; then
        ROCM_VERSION=$(detect_rocm_version) || {{
            echo "[install.sh] Could not auto-detect ROCm version; pass --rocm explicitly." >&2
            exit 1
        }}
    fi
    if [ "$USE_MIRRORS" -eq 1 ]; then
        PLATFORM_TORCH_INDEX="https://mirrors.example.org/pytorch/whl/rocm${{ROCM_VERSION}}"
    else
        PLATFORM_TORCH_INDEX="https://download.pytorch.org/whl/rocm${{ROCM_VERSION}}"
    fi
    PLATFORM_TORCH_PACKAGES=("torch" "torchvision" "torchaudio" "pytorch-triton-rocm")
}}

configure_platform() {{
    case "$PLATFORM" in
        nvidia) configure_nvidia ;;
        amd) configure_amd ;;
        *) echo "Unknown platform: $PLATFORM" >&2; exit 1 ;;
    esac
}}

install_uv() {{
    if ! command -v uv &> /dev/null; then
        echo "uv command not found. Installing uv..."
        pip_failed=0
        pip install uv || pip_failed=1
        if [ $pip_failed -eq 1 ]; then
            wget -qO- https://astral.sh/uv/install.sh | sh
            export PATH="$HOME/.local/bin:$PATH"
        fi
    fi
}}

create_and_sync_venv() {{
    local required_python_mm
    required_python_mm="$(echo "$PYTHON_VERSION" | awk -F. '{{print $1"."$2}}')"
    if [ -d "$VENV_DIR" ] && [ -f "$VENV_DIR/bin/activate" ]; then
        echo "Found existing venv at $VENV_DIR; validating Python version compatibility..."
        source "$VENV_DIR/bin/activate"
        local active_python_mm
        active_python_mm="$(python - <<'EOF'
import sys
print(f"{{sys.version_info.major}}.{{sys.version_info.minor}}")
EOF
)"
        if [ "$active_python_mm" != "$required_python_mm" ]; then
            deactivate || true
            rm -rf "$VENV_DIR"
            install_uv
            uv venv "$VENV_DIR" --python "$PYTHON_VERSION"
            source "$VENV_DIR/bin/activate"
        fi
    else
        install_uv
        uv venv "$VENV_DIR" --python "$PYTHON_VERSION"
        source "$VENV_DIR/bin/activate"
    fi
    uv sync --active $NO_INSTALL_RLINF_CMD
}}

clone_or_reuse_repo() {{
    local env_var_name="$1"
    local default_dir="$2"
    local git_url="$3"
    shift 3
    local env_value
    env_value="$(printenv "$env_var_name" 2>/dev/null || true)"
    local target_dir
    if [ -n "$env_value" ]; then
        target_dir="$env_value"
        if [ ! -d "$target_dir" ]; then
            git clone "$@" "$git_url" "$target_dir" >&2
        fi
    else
        target_dir="$default_dir"
        if [ ! -d "$target_dir" ]; then
            git clone "$@" "$git_url" "$target_dir" >&2
        fi
    fi
    echo "$target_dir"
}}

install_flash_attn() {{
    local torch_mm cuda_mm wheel
    torch_mm=$(python -c "import torch; print('.'.join(torch.__version__.split('.')[:2]))")
    cuda_mm=$(detect_cuda_major_minor | tr ' ' '.')
    wheel="flash_attn-2.8.3+cu${{cuda_mm}}torch${{torch_mm}}-cp311-cp311-linux_x86_64.whl"
    if ! uv pip install "https://github.com/Dao-AILab/flash-attention/releases/download/v2.8.3/${{wheel}}"; then
        echo "[install.sh] prebuilt flash-attn not found; building from source" >&2
        uv pip install flash-attn==2.8.3 --no-build-isolation
    fi
}}

derive_torch_pin() {{
    local version="$1" index="$2" mirror="$3"
    local major="${{version%%.*}}" rest="${{version#*.}}"
    if [ -n "$index" ]; then
        echo "torch==${{version}}+${{index}} --index-url ${{mirror}}/whl/${{index}}"
    elif [ "$major" -ge 2 ] && [ "${{rest%%.*}}" -ge 6 ]; then
        echo "torch==${{version}}"
    else
        echo "torch>=2.6"
    fi
}}

install_common_embodied_deps() {{
    uv pip install -r requirements/embodied/common.txt
    if [ "$PLATFORM" = "nvidia" ]; then
        uv pip install nvidia-ml-py
    fi
}}

install_agentic() {{
    local engine="${{ENGINE:-sglang}}"
    local engine_ver
    case "$engine" in
        sglang) engine_ver="${{SGLANG_VERSION:-0.5.4}}" ;;
        vllm) engine_ver="0.11.0" ;;
        *) echo "Unknown engine: $engine" >&2; exit 1 ;;
    esac
    create_and_sync_venv
    uv pip install -r "requirements/agentic/${{engine}}-${{engine_ver}}.txt"
    install_flash_attn
}}
'''

_INSTALL_MAIN = '''
main() {{
    parse_args "$@"
    configure_platform
    case "$TARGET" in
        embodied)
            case "$MODEL" in
{arms}
                "") create_and_sync_venv ;;
            esac
            ;;
        agentic) install_agentic ;;
        docs)
            create_and_sync_venv
            uv pip install -r requirements/docs.txt
            ;;
        *)
            echo "Unknown target: $TARGET" >&2
            echo "Supported targets: ${{SUPPORTED_TARGETS[*]}}" >&2
            exit 1
            ;;
    esac
}}

main "$@"
'''


def install_script(n: int = 16) -> str:
    """An installer of ``n`` models shaped like RLinf's ``requirements/install.sh`` (16 models: ~3,000 lines
    with the helpers, as the original's 3,125)."""
    names = [f"model{k}" for k in range(n)]
    out = [_INSTALL_HEAD.format(models=" ".join(f'"{m}"' for m in names))]
    for k, name in enumerate(names):
        out.append(_INSTALLER.format(name=name, upper=name.upper(), k=k))
        # The original's installers are longer: model-specific fixes, comments, patched files.
        out.append("".join(f'''
patch_{name}_{j}() {{
    # Work around {name}'s pinned dependency #{j}: see the upstream issue.
    local site
    site=$(python -c "import site; print(site.getsitepackages()[0])")
    if [ -f "$site/{name}/compat_{j}.py" ]; then
        sed -i 's/old_api_{j}/new_api_{j}/' "$site/{name}/compat_{j}.py"
        echo "[install.sh] patched {name} compat {j}"
    fi
}}
''' for j in range(12)))
    arms = "\n".join(f"                {name}) configure_{name}; install_{name}_model; install_{name}_env; "
                     + "; ".join(f"patch_{name}_{j}" for j in range(12)) + " ;;" for name in names)
    out.append(_INSTALL_MAIN.format(arms=arms))
    return "".join(out)


def launch_script(n: int) -> str:
    """A serving script of ``n`` blocks (~2 KB each: 2 MB is about 1,000), each serving one model: its settings,
    a tensor-parallel knob, a generated configuration (a here-document), a readiness helper and logging around one
    launch, as long sweep scripts are written."""
    out = ['#!/bin/bash\n# Serve every model of the sweep with SGLang, one after another.\nset -euo pipefail\n'
           'LOG_DIR="${LOG_DIR:-./logs}"\n\nwait_ready() {\n  local port="$1"\n'
           '  for i in $(seq 1 120); do\n    curl -sf "http://127.0.0.1:${port}/health" >/dev/null && return 0\n'
           '    sleep 5\n  done\n  echo "server on port ${port} did not start" >&2\n  return 1\n}\n']
    for k in range(n):
        out.append(_BLOCK.replace("{k}", str(k)).replace("{port}", str(30000 + k % 1000))
                   .replace("{variant}", str(k % 7)).replace("{split}", str(k % 5)))
    return "".join(out)


_BLOCK = '''
# ---------------------------------------------------------------------------
# Model {k}: Llama 3.1 8B Instruct, variant {variant}, evaluated on the long-context split.
# ---------------------------------------------------------------------------
MODEL_{k}="meta-llama/Llama-3.1-8B-Instruct"
PORT_{k}={port}
LOG_{k}="$LOG_DIR/model-{k}.log"
TP_{k}=2
[ "${BIG:-0}" = 1 ] && TP_{k}=8
if [ "${DRY_RUN:-0}" = 1 ]; then
  echo "dry run: would serve $MODEL_{k} on port $PORT_{k} with tp $TP_{k}"
else
  mkdir -p "$LOG_DIR"
fi
cat > "$LOG_DIR/model-{k}.yaml" <<EOF
model: $MODEL_{k}
port: $PORT_{k}
tensor_parallel: $TP_{k}
dataset: long-context-{split}
max_new_tokens: 512
temperature: 0.0
top_p: 1.0
seed: {k}
EOF
echo "[serve] model {k}: $MODEL_{k} on port $PORT_{k} (tp $TP_{k}), config in $LOG_DIR/model-{k}.yaml"
nohup python -m sglang.launch_server --model-path "$MODEL_{k}" --port "$PORT_{k}" --tp "$TP_{k}" \\
  --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.85 > "$LOG_{k}" 2>&1 &
SERVER_{k}=$!
wait_ready "$PORT_{k}"
python3 bench_client.py --port "$PORT_{k}" --config "$LOG_DIR/model-{k}.yaml" --output "$LOG_DIR/model-{k}.jsonl"
kill "$SERVER_{k}" || true
wait "$SERVER_{k}" 2>/dev/null || true
echo "[serve] model {k} done: $(wc -l < "$LOG_DIR/model-{k}.jsonl") results"
'''


def short_lines(n: int) -> str:
    """``n`` short ``echo`` lines under one comment that names sglang and its KV cache option."""
    return "#!/bin/bash\n# generated by a sglang --kv-cache-dtype sweep\n" + "".join(f"echo {k}\n" for k in range(n))


def python_launches(n: int) -> str:
    """A module of ``n`` launcher functions (~440 bytes each: 2 MB is about 4,500)."""
    out = ["import logging\nimport os\nimport subprocess\n\nlogger = logging.getLogger(__name__)\n"]
    for k in range(n):
        out.append(f'''

def serve_{k}(model="meta-llama/Llama-3.1-8B-Instruct", port={30000 + k % 1000}):
    """Launch server {k}."""
    args = [
        "python", "-m", "sglang.launch_server",
        "--model-path", model,
        "--port", str(port),
        "--tp", "{1 + k % 8}",
        "--kv-cache-dtype", "fp8_e4m3",
    ]
    if os.environ.get("DEBUG_{k}"):
        args += ["--log-level", "debug"]
    logger.info("starting %s", args)
    return subprocess.Popen(args)
''')
    return "".join(out)


def elif_chain(n: int, dtype: str = "nvfp4") -> str:
    """One launch whose KV cache dtype an ``if``/``elif`` chain of ``n`` arms chooses; the ``else`` arm sets
    ``dtype``."""
    arms = "".join(f"elif mode == 'm{k}':\n    kv = 'fp8_e4m3'\n" for k in range(1, n))
    return ("import os\nimport subprocess\n\nmode = os.environ.get('MODE')\nif mode == 'm0':\n    kv = 'fp8_e4m3'\n"
            + arms + f"else:\n    kv = '{dtype}'\n"
            "subprocess.run(['python', '-m', 'sglang.launch_server', '--kv-cache-dtype', kv,\n"
            "                '--attention-backend', 'triton'])\n")
