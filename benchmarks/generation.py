"""Generation throughput on the project's two workloads: the default policy and the SmolLM2 judge.

Run: ``.venv/bin/python benchmarks/generation.py`` (about 6 minutes on 2 idle CPU cores; ``--quick`` for a
smoke run of every engine at small sizes). Each workload runs through vLLM via the project's backend
(``make_backend`` + ``sample_solutions`` / ``rollouts_from_prefixes``), through raw ``vllm.LLM.generate``
with the very same engine arguments (policy only: it measures what the backend costs), and through
transformers' batched ``generate`` with the same prompts and limits. Every engine counts only real tokens,
up to and including EOS.

- policy: the default policy (``arith-policy``, or ``--policy FOLDER``) sampling one solution per word
  problem, then rolling out every gold step prefix (the Monte-Carlo labelers' call); tokens/s over both.
- SmolLM2: judging (ProcessBench prompts, ``k`` votes each), and seeded rollouts from long shared step
  prefixes with prefix caching on and off.

The last stdout line is one JSON object: ``vllm_tokens_per_s``, ``transformers_tokens_per_s``,
``rollouts_per_s_prefix_cache``, ``rollouts_per_s_no_prefix_cache`` (SmolLM2), ``policy_backend_tokens_per_s``,
``policy_raw_vllm_tokens_per_s``, ``policy_transformers_tokens_per_s``, plus per-phase detail.
Targets: backend >= 80% of raw vLLM on the policy; vLLM >= 2x transformers on both models; prefix caching
>= 1.3x. Results depend on load: report ``uptime`` with them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from prm.datagen import SolutionToLabel
from prm.format import format_prompt
from prm.generation import (
    GenerationBackend,
    GenerationConfig,
    make_backend,
    rollouts_from_prefixes,
    sample_solutions,
)
from prm.labeling import judge_prompt
from prm.models import load_tokenizer, resolve_model
from prm.policy import PolicyTrainConfig
from prm.tasks import ArithmeticConfig, ArithmeticProblem, generate_problems

JUDGE = "smollm2-135m-instruct"
# A long instruction shared by every SmolLM2 rollout prompt, like a few-shot or rubric header in real labeling.
_HEADER = (
    "Solve the arithmetic problem. Write exactly one operation per line in the form 'expr = result', "
    "keep the order of operations (multiplication and division before addition and subtraction), "
    "never skip a step, and finish with a line 'Answer: N'. Example: 12+7-3*2 = 12+7-6, then "
    "12+7-6 = 19-6, then 19-6 = 13, then Answer: 13. "
) * 2


@dataclass(frozen=True)
class BenchConfig:
    """Workload sizes; the defaults took 6 minutes on 2 idle CPU cores (engine starts are ~40 s each)."""

    policy: str = "arith-policy"  # registered name or model folder
    # --- policy: solutions, then rollouts of gold step prefixes ---
    solutions: int = 1024  # word problems, one sample each (the measurement: 1,024 prompts)
    solution_tokens: int = 96  # budget per solution; the shipped policy ends at EOS after ~50 on average
    rollout_problems: int = 64  # problems whose every gold step prefix is rolled out (~4.5 steps each)
    rollouts_per_prefix: int = 8  # Math-Shepherd's N, the MC labeler's default
    rollout_tokens: int = 96  # same budget as a solution: a rollout finishes the solution
    # transformers rows (prompts x samples) per generate call: each call pads to its longest prompt and decodes
    # until every row stopped, so prompts are sorted by length first. Measured here (bf16, solutions +
    # rollouts): 128-256 rows ~3,000 tokens/s, 1,024 rows 1,160, and 2,048 (256 prefixes x 8) 1,700.
    policy_hf_batch: int = 256
    # --- SmolLM2 judging ---
    judge_prompts: int = 16  # solutions judged (ProcessBench prompt, ~250 tokens with the chat template)
    judge_votes: int = 5  # JudgeConfig.k
    judge_tokens: int = 64  # per vote; JudgeConfig allows 512, the throughput ratio settles well before
    judge_temperature: float = 0.7  # JudgeConfig.temperature
    judge_hf_batch: int = 80  # transformers rows per call: all 16 prompts x 5 votes at once
    # --- SmolLM2 rollouts from shared prefixes, prefix caching on vs off ---
    cache_questions: int = 4  # solutions whose step prefixes get rolled out
    cache_steps: int = 3  # prefixes per solution (after step 1..k)
    cache_rollouts: int = 8  # rollouts per prefix
    cache_rollout_tokens: int = 16  # short continuations: the prefix prefill dominates, as in MC labeling
    seed: int = 0


QUICK = BenchConfig(solutions=128, solution_tokens=48, rollout_problems=8, rollout_tokens=48, judge_prompts=4,
                    judge_votes=2, judge_tokens=24, judge_hf_batch=8, cache_questions=2, cache_steps=2)


_START = time.perf_counter()


def log(message: str) -> None:
    """``message`` with the seconds since start, flushed (the engines' own logs go to stderr)."""
    print(f"[{time.perf_counter() - _START:5.0f} s] {message}", flush=True)


@dataclass(frozen=True)
class Phase:
    """One timed call: real generated tokens and completions, and the wall time it took."""

    tokens: int
    completions: int
    seconds: float


def rate(phases: Sequence[Phase], what: str = "tokens") -> float:
    """Tokens (or completions) per second over several phases.

    >>> rate([Phase(100, 4, 1.0), Phase(50, 2, 0.5)]), rate([Phase(100, 4, 1.0)], "completions")
    (100.0, 4.0)
    """
    return sum(getattr(p, what) for p in phases) / sum(p.seconds for p in phases)


def real_tokens(rows: Any, eos_ids: set[int], pad_id: int | None) -> int:
    """Generated tokens up to and including the first EOS of each row (transformers pads after it).

    >>> import torch
    >>> real_tokens(torch.tensor([[5, 2, 0, 0], [5, 6, 7, 8], [2, 0, 0, 0]]), {2}, 0)
    7
    """
    total = 0
    for row in rows.tolist():
        stop = next((i + 1 for i, tok in enumerate(row) if tok in eos_ids), None)
        if stop is None:  # budget hit, or a batch row that was all padding
            stop = len(row) - (sum(1 for tok in row if tok == pad_id) if pad_id is not None else 0)
        total += stop
    return total


# --- prompts --------------------------------------------------------------------------------------------


def policy_problems(count: int, seed: int) -> list[ArithmeticProblem]:
    """Word problems like the policy's training data (PolicyTrainConfig defaults), 1..8 steps in turn."""
    train = PolicyTrainConfig()
    per_ops = [
        generate_problems(-(-count // (train.max_ops - train.min_ops + 1)),
                          ArithmeticConfig(n_ops=n, operators=train.operators, max_value=train.max_value,
                                           style=train.styles[0]), seed=seed + n)
        for n in range(train.min_ops, train.max_ops + 1)
    ]
    return [problems[i] for i in range(len(per_ops[0])) for problems in per_ops][:count]


def gold_prefixes(tokenizer: Any, problems: Sequence[ArithmeticProblem]) -> list[str]:
    """Every gold step prefix, rendered as the labelers render them (prompt + completion up to step k)."""
    prefixes = []
    for p in problems:
        solution = SolutionToLabel.of_steps(p.problem_id, p.problem_id, format_prompt(tokenizer, p.question),
                                            p.gold_steps, str(p.answer))
        prefixes += [solution.target(k).prefix for k in range(len(p.gold_steps))]
    return prefixes


def judge_prompts(tokenizer: Any, problems: Sequence[ArithmeticProblem]) -> list[str]:
    """ProcessBench judge prompts over gold solutions, in SmolLM2's chat template."""
    return [format_prompt(tokenizer, judge_prompt(p.question, p.gold_steps)) for p in problems]


def cache_prefixes(tokenizer: Any, bench: BenchConfig) -> list[str]:
    """Header + question + first k steps: the prefixes of one solution share all earlier text."""
    prefixes = []
    for i in range(bench.cache_questions):
        prompt = format_prompt(tokenizer, _HEADER + f"Evaluate {7 + i}*{3 + i % 5}-{11 + 2 * i}+{i % 9} step by step.")
        steps = [f"Step {k}: rewrite the expression and compute one operation, giving {k * 17 % 23}." for k in range(9)]
        prefixes += [prompt + "\n".join(steps[: k + 1]) + "\n" for k in range(bench.cache_steps)]
    return prefixes


# --- engines --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """One generation call every engine runs identically."""

    prompts: list[str]
    n: int
    max_tokens: int
    temperature: float
    seed: int


def timed(call: Callable[[], tuple[int, int]]) -> Phase:
    start = time.perf_counter()
    tokens, completions = call()
    return Phase(tokens, completions, time.perf_counter() - start)


def backend_phase(backend: GenerationBackend, job: Job, rollouts: bool = False) -> Phase:
    """The job through the project's backend (``rollouts_from_prefixes`` for the labelers' call)."""
    call = rollouts_from_prefixes if rollouts else sample_solutions

    def run() -> tuple[int, int]:
        rows = call(backend, job.prompts, job.n, max_tokens=job.max_tokens, temperature=job.temperature, seed=job.seed)
        bad = [r.error for r in rows if not r.ok]
        if bad:
            raise RuntimeError(f"{len(bad)} rows failed, first: {bad[0]}")
        return sum(r.total_completion_tokens for r in rows), sum(len(r.texts) for r in rows)

    return timed(run)


def raw_vllm_phases(config: GenerationConfig, jobs: Sequence[Job]) -> list[Phase]:
    """The jobs through ``vllm.LLM.generate`` in this process, with the backend's engine arguments and seeds."""
    import vllm
    from vllm import SamplingParams
    from vllm.platforms import current_platform

    from prm.generation.vllm_worker import cpu_has_native_bf16, engine_kwargs

    llm = vllm.LLM(**engine_kwargs(config, on_cpu=current_platform.is_cpu(), native_bf16=cpu_has_native_bf16()))
    llm.generate(jobs[0].prompts[:2], SamplingParams(max_tokens=2), use_tqdm=False)  # warm-up
    phases = []
    for job in jobs:
        # sample_solutions' seeds: request i gets seed + i * n (vLLM seeds its sample j with seed + j).
        params = [SamplingParams(n=job.n, max_tokens=job.max_tokens, temperature=job.temperature,
                                 seed=job.seed + i * job.n) for i in range(len(job.prompts))]

        def run(job: Job = job, params: list[SamplingParams] = params) -> tuple[int, int]:
            outs = llm.generate(job.prompts, params, use_tqdm=False)
            return sum(len(s.token_ids) for o in outs for s in o.outputs), sum(len(o.outputs) for o in outs)

        phases.append(timed(run))
    llm.llm_engine.engine_core.shutdown()
    return phases


def transformers_phases(model: str, jobs: Sequence[Job], batch: int) -> list[Phase]:
    """The jobs through transformers' batched ``generate`` (sampling, no top-k), prompts sorted by length.

    Runs bf16 where the CPU computes it natively, as vLLM does. Measured here against fp32: 2.1x on SmolLM2
    judging (48.6 vs 23.6 tokens/s), 1.3x on the policy (1,690 vs 1,330 tokens/s).
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prm.generation import cpu_has_native_bf16

    folder = str(resolve_model(model))
    tokenizer = AutoTokenizer.from_pretrained(folder, padding_side="left")
    dtype = torch.bfloat16 if cpu_has_native_bf16() else torch.float32
    net = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype).eval()
    eos = {tokenizer.eos_token_id} | set(_as_list(net.generation_config.eos_token_id))
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    # The same special tokens vLLM adds: <s> for the policy, none for SmolLM2's chat template.
    encode = dict(return_tensors="pt", padding=True, add_special_tokens=True)
    with torch.inference_mode():
        warm = tokenizer(jobs[0].prompts[:2], **encode)
        net.generate(**warm, max_new_tokens=2, pad_token_id=pad)
        phases = []
        for job in jobs:
            torch.manual_seed(job.seed)
            ordered = sorted(job.prompts, key=len)

            def run(job: Job = job, ordered: list[str] = ordered) -> tuple[int, int]:
                tokens = rows = 0
                per_call = max(1, batch // job.n)  # ``batch`` counts rows: prompts x samples
                for start in range(0, len(ordered), per_call):
                    enc = tokenizer(ordered[start : start + per_call], **encode)
                    out = net.generate(**enc, max_new_tokens=job.max_tokens, do_sample=job.temperature > 0,
                                       temperature=job.temperature or None, top_k=0, top_p=1.0,
                                       num_return_sequences=job.n, pad_token_id=pad)
                    tokens += real_tokens(out[:, enc.input_ids.shape[1] :], eos, pad)
                    rows += out.shape[0]
                return tokens, rows

            phases.append(timed(run))
    return phases


def _as_list(value: Any) -> list[int]:
    return [] if value is None else list(value) if isinstance(value, list | tuple) else [value]


# --- workloads ------------------------------------------------------------------------------------------


def policy_workload(bench: BenchConfig) -> dict[str, float]:
    tokenizer = load_tokenizer(bench.policy)
    solutions = Job([format_prompt(tokenizer, p.question) for p in policy_problems(bench.solutions, bench.seed)],
                    1, bench.solution_tokens, 1.0, bench.seed)
    prefixes = gold_prefixes(tokenizer, policy_problems(bench.rollout_problems, bench.seed + 100))
    rollouts = Job(prefixes, bench.rollouts_per_prefix, bench.rollout_tokens, 1.0, bench.seed + 1)
    log(f"policy {bench.policy}: {len(solutions.prompts)} solutions x {bench.solution_tokens} tokens; "
        f"{len(prefixes)} gold prefixes x {bench.rollouts_per_prefix} rollouts x {bench.rollout_tokens} tokens")
    result: dict[str, float] = {}
    with make_backend(GenerationConfig(model=bench.policy)) as backend:
        backend_phase(backend, Job(solutions.prompts[:2], 1, 2, 1.0, 0))  # warm-up
        backend_runs = [backend_phase(backend, solutions), backend_phase(backend, rollouts, rollouts=True)]
        engine_config = backend.config  # resolved model path and context: the raw engine gets the same
        log(f"backend done; engine {backend.info.extra}")
    raw_runs = raw_vllm_phases(engine_config, [solutions, rollouts])
    log("raw vLLM done")
    hf_runs = transformers_phases(str(engine_config.model), [solutions, rollouts], bench.policy_hf_batch)
    log("transformers done")
    for name, runs in (("backend", backend_runs), ("raw_vllm", raw_runs), ("transformers", hf_runs)):
        result[f"policy_{name}_tokens_per_s"] = rate(runs)
        result[f"policy_{name}_solution_tokens_per_s"] = rate(runs[:1])
        result[f"policy_{name}_rollouts_per_s"] = rate(runs[1:], "completions")
        log(f"policy {name}: {rate(runs):.0f} tokens/s (solutions {rate(runs[:1]):.0f} tokens/s, "
            f"{runs[0].tokens / runs[0].completions:.1f} tokens each; rollouts {rate(runs[1:], 'completions'):.1f}/s, "
            f"{runs[1].tokens / runs[1].completions:.1f} tokens each)")
    return result


def judge_workload(bench: BenchConfig) -> dict[str, float]:
    tokenizer = load_tokenizer(JUDGE)
    judging = Job(judge_prompts(tokenizer, policy_problems(bench.judge_prompts, bench.seed + 200)),
                  bench.judge_votes, bench.judge_tokens, bench.judge_temperature, bench.seed + 2)
    prefixes = cache_prefixes(tokenizer, bench)
    cached = Job(prefixes, bench.cache_rollouts, bench.cache_rollout_tokens, 1.0, bench.seed + 3)
    prompt_len = len(tokenizer(judging.prompts[-1], add_special_tokens=False).input_ids)
    log(f"SmolLM2: {len(judging.prompts)} judge prompts (~{prompt_len} tokens) x {bench.judge_votes} votes x "
        f"{bench.judge_tokens} tokens; {len(prefixes)} shared prefixes x {bench.cache_rollouts} rollouts x "
        f"{bench.cache_rollout_tokens} tokens")
    result: dict[str, float] = {}
    config = GenerationConfig(model=JUDGE, max_model_len=2048)
    with make_backend(config) as backend:
        backend_phase(backend, Job(judging.prompts[:1], 1, 2, 1.0, 0))  # warm-up
        judged = backend_phase(backend, judging)
        result["rollouts_per_s_prefix_cache"] = rate([backend_phase(backend, cached, rollouts=True)], "completions")
        log(f"backend with prefix caching done; engine {backend.info.extra}")
    with make_backend(dataclasses.replace(config, enable_prefix_caching=False)) as backend:
        backend_phase(backend, Job(judging.prompts[:1], 1, 2, 1.0, 0))
        result["rollouts_per_s_no_prefix_cache"] = rate([backend_phase(backend, cached, rollouts=True)], "completions")
    log("backend without prefix caching done")
    (hf_judged,) = transformers_phases(JUDGE, [judging], bench.judge_hf_batch)
    result["vllm_tokens_per_s"] = rate([judged])
    result["transformers_tokens_per_s"] = rate([hf_judged])
    log(f"SmolLM2 judging: vLLM {rate([judged]):.1f} tokens/s, transformers {rate([hf_judged]):.1f} tokens/s; "
        f"rollouts {result['rollouts_per_s_prefix_cache']:.2f}/s with prefix caching, "
        f"{result['rollouts_per_s_no_prefix_cache']:.2f}/s without")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run of every engine")
    parser.add_argument("--policy", default=BenchConfig.policy, help="policy name or folder (default arith-policy)")
    args = parser.parse_args()
    bench = dataclasses.replace(QUICK if args.quick else BenchConfig(), policy=args.policy)
    result = policy_workload(bench) | judge_workload(bench)
    backend = result["policy_backend_tokens_per_s"]
    log(
        f"policy: backend/raw vLLM {backend / result['policy_raw_vllm_tokens_per_s']:.2f} (target 0.8), "
        f"backend/transformers {backend / result['policy_transformers_tokens_per_s']:.2f}x (target 2x); "
        f"SmolLM2: vLLM/transformers {result['vllm_tokens_per_s'] / result['transformers_tokens_per_s']:.2f}x "
        f"(target 2x), prefix cache "
        f"{result['rollouts_per_s_prefix_cache'] / result['rollouts_per_s_no_prefix_cache']:.2f}x (target 1.3x)"
    )
    print(json.dumps({key: round(value, 2) for key, value in sorted(result.items())}))


if __name__ == "__main__":
    main()
