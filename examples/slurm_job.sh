#!/bin/bash
#SBATCH --job-name=llama70b-serve
#SBATCH --nodes=1
#SBATCH --gres=gpu:h100:8
#SBATCH --time=04:00:00
#
# Serve Llama-3.3-70B for the long-context eval.

set -euo pipefail
source ~/envs/sglang/bin/activate

python3 -m sglang.launch_server \
    --model-path meta-llama/Llama-3.3-70B-Instruct \
    --tp 8 \
    --kv-cache-dtype nvfp4 \
    --host 0.0.0.0 --port 30000
