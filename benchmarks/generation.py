"""Generation throughput on SmolLM2-135M: vLLM vs transformers, and prefix caching on vs off.

Run: ``.venv/bin/python benchmarks/generation.py`` (about 5 minutes on 2 idle CPU cores). The last stdout
line is one JSON object with ``vllm_tokens_per_s``, ``transformers_tokens_per_s``,
``rollouts_per_s_prefix_cache`` and ``rollouts_per_s_no_prefix_cache``.
Targets: vLLM >= 2x transformers; prefix caching >= 1.3x on shared step prefixes.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass

from prm.format import format_prompt
from prm.generation import (
    GenerationBackend,
    GenerationConfig,
    make_backend,
    rollouts_from_prefixes,
    sample_solutions,
)
from prm.models import load_tokenizer, resolve_model

MODEL = "smollm2-135m-instruct"
# A long instruction shared by every rollout prompt, like a few-shot or rubric header in real labeling.
_HEADER = (
    "Solve the arithmetic problem. Write exactly one operation per line in the form 'expr = result', "
    "keep the order of operations (multiplication and division before addition and subtraction), "
    "never skip a step, and finish with a line 'Answer: N'. Example: 12+7-3*2 = 12+7-6, then "
    "12+7-6 = 19-6, then 19-6 = 13, then Answer: 13. "
) * 2


@dataclass(frozen=True)
class BenchConfig:
    """Workload sizes; defaults keep one run near 4 minutes on 2 CPU cores."""

    num_prompts: int = 32  # one batch for the tokens/s comparison
    # Generation budget per completion, both engines; transformers decodes ~1 step/s at batch 32 here.
    max_tokens: int = 32
    num_questions: int = 4  # solutions whose step prefixes get rolled out
    steps_per_question: int = 3  # prefixes per solution (after step 1..k)
    rollouts_per_prefix: int = 8  # Monte-Carlo rollouts per prefix
    rollout_tokens: int = 16  # short continuations: the prefix prefill dominates, as in MC labeling


def questions(count: int) -> list[str]:
    """Deterministic arithmetic questions."""
    return [f"Evaluate {7 + i}*{3 + i % 5}-{11 + 2 * i}+{i % 9} step by step." for i in range(count)]


def step_prefixes(tokenizer: object, bench: BenchConfig) -> list[str]:
    """Prompt + first k steps for each question: prefixes of one solution share all earlier text."""
    prefixes = []
    for q in questions(bench.num_questions):
        prompt = format_prompt(tokenizer, _HEADER + q)
        steps = [f"Step {k}: rewrite the expression and compute one operation, giving {k * 17 % 23}." for k in range(9)]
        prefixes += [prompt + "\n".join(steps[: k + 1]) + "\n" for k in range(bench.steps_per_question)]
    return prefixes


def transformers_tokens_per_s(prompts: list[str], bench: BenchConfig) -> float:
    """Greedy batched ``generate``; counts real tokens (up to EOS) like vLLM does."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = resolve_model(MODEL)
    tokenizer = AutoTokenizer.from_pretrained(str(folder), padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32).eval()
    batch = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    with torch.inference_mode():
        model.generate(**tokenizer(prompts[:2], return_tensors="pt", padding=True), max_new_tokens=4)  # warm-up
        start = time.perf_counter()
        out = model.generate(**batch, max_new_tokens=bench.max_tokens, do_sample=False)
        elapsed = time.perf_counter() - start
    new = out[:, batch.input_ids.shape[1] :]
    eos = tokenizer.eos_token_id
    tokens = sum(int((row == eos).nonzero()[0, 0]) + 1 if (row == eos).any() else len(row) for row in new)
    return tokens / elapsed


def vllm_tokens_per_s(backend: GenerationBackend, prompts: list[str], bench: BenchConfig) -> float:
    """Greedy, one batch through the offline engine, after a warm-up call."""
    sample_solutions(backend, prompts[:2], n=1, max_tokens=4, temperature=0.0)
    start = time.perf_counter()
    rows = sample_solutions(backend, prompts, n=1, max_tokens=bench.max_tokens, temperature=0.0)
    elapsed = time.perf_counter() - start
    return sum(r.total_completion_tokens for r in rows) / elapsed


def rollouts_per_s(backend: GenerationBackend, prefixes: list[str], bench: BenchConfig) -> float:
    """Seeded temperature-1 rollouts from every prefix, all in one call."""
    rollouts_from_prefixes(backend, ["warm-up"], n=1, max_tokens=2)
    start = time.perf_counter()
    rows = rollouts_from_prefixes(
        backend, prefixes, n=bench.rollouts_per_prefix, max_tokens=bench.rollout_tokens, seed=0
    )
    elapsed = time.perf_counter() - start
    assert all(r.ok for r in rows), [r.error for r in rows if not r.ok]
    return sum(len(r.texts) for r in rows) / elapsed


def engine(prefix_caching: bool) -> GenerationBackend:
    """SmolLM2 on the offline engine in fp32, the dtype transformers runs here."""
    return make_backend(
        GenerationConfig(model=MODEL, max_model_len=2048, dtype="float32", enable_prefix_caching=prefix_caching)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-prompts", type=int, default=BenchConfig.num_prompts)
    parser.add_argument("--max-tokens", type=int, default=BenchConfig.max_tokens)
    args = parser.parse_args()
    bench = BenchConfig(num_prompts=args.num_prompts, max_tokens=args.max_tokens)
    tokenizer = load_tokenizer(MODEL)
    prompts = [format_prompt(tokenizer, q) for q in questions(bench.num_prompts)]
    prefixes = step_prefixes(tokenizer, bench)
    prefix_len = len(tokenizer(prefixes[0], add_special_tokens=False).input_ids)
    print(
        f"{len(prompts)} prompts x {bench.max_tokens} tokens; {len(prefixes)} prefixes (>= {prefix_len} tokens) "
        f"x {bench.rollouts_per_prefix} rollouts x {bench.rollout_tokens} tokens",
        flush=True,
    )
    result = {"transformers_tokens_per_s": transformers_tokens_per_s(prompts, bench)}
    print(f"transformers: {result['transformers_tokens_per_s']:.1f} tokens/s", flush=True)
    with engine(prefix_caching=True) as backend:
        result["vllm_tokens_per_s"] = vllm_tokens_per_s(backend, prompts, bench)
        print(f"vllm: {result['vllm_tokens_per_s']:.1f} tokens/s", flush=True)
        result["rollouts_per_s_prefix_cache"] = rollouts_per_s(backend, prefixes, bench)
    print(f"rollouts with prefix caching: {result['rollouts_per_s_prefix_cache']:.2f}/s", flush=True)
    with engine(prefix_caching=False) as backend:
        result["rollouts_per_s_no_prefix_cache"] = rollouts_per_s(backend, prefixes, bench)
    print(
        f"vllm/transformers {result['vllm_tokens_per_s'] / result['transformers_tokens_per_s']:.2f}x (target 2x); "
        f"prefix cache {result['rollouts_per_s_prefix_cache'] / result['rollouts_per_s_no_prefix_cache']:.2f}x "
        "(target 1.3x)",
        flush=True,
    )
    print(json.dumps({key: round(value, 2) for key, value in sorted(result.items())}))


if __name__ == "__main__":
    main()
