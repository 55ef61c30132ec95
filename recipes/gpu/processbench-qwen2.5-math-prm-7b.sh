#!/usr/bin/env bash
# Qwen2.5-Math-PRM-7B on ProcessBench's GSM8K and MATH splits, scored with the official metric (QwenLM/ProcessBench
# code/run_eval.py): the first step with P(good) < 0.5 is the predicted error. A command, not a recipe: a recipe
# (pipelines/recipe.py) samples, labels and trains from a problem set; this evaluates a published PRM on a fixed
# step-labelled set, which no recipe section describes.
#   make venv ACCEL=cuda && bash recipes/gpu/processbench-qwen2.5-math-prm-7b.sh [--data DIR] [--limit N]
# Needs: one CUDA GPU (>= 24 GB: 7B weights in bf16), the hub or the model in the local HF cache, and the splits in
# ../shared/data/processbench (else pass --data with a folder holding gsm8k.json and math.json, e.g. the
# Qwen/ProcessBench dataset's files). `--dry-run` checks the data and the hub id offline without loading anything.
# Expected (Zhang et al. 2025, "The Lessons of Developing Process Reward Models", ProcessBench table): F1 82.4 on
# GSM8K and 77.6 on MATH at the fixed threshold; the command also reports the threshold chosen on the other split.
# Cost (an estimate, not a measured run): 1,400 solutions of ~400-1,000 tokens, one forward pass each: about a minute
# on one H100 once the ~15 GB of weights are loaded. benchmarks/gpu.py runs the same command (stage processbench).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p benchmarks/results
exec .venv/bin/prm-pipeline eval processbench --prm Qwen/Qwen2.5-Math-PRM-7B --convention qwen2.5-math-prm \
    --trust-remote-code --split gsm8k math --out benchmarks/results/processbench-qwen2.5-math-prm-7b.jsonl "$@"
