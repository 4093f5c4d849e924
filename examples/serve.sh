#!/usr/bin/env bash
# Serve Qwen3-8B with a 4-bit KV cache: twice the context in the same GPU memory.
set -euo pipefail

MODEL=${MODEL:-Qwen/Qwen3-8B}

docker run --gpus all --ipc=host -p 30000:30000 \
  -v ~/.cache/huggingface:/root/.cache/huggingface \
  lmsysorg/sglang:v0.5.23-cu129 \
  python3 -m sglang.launch_server \
    --model-path "$MODEL" \
    --kv-cache-dtype nvfp4 \
    --attention-backend triton \
    --host 0.0.0.0 --port 30000
