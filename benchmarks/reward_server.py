"""Reward server throughput: 32 concurrent OpenRLHF-style clients against one request at a time, same server.

Run: ``.venv/bin/python benchmarks/reward_server.py`` (``--model DIR`` for a PRM folder; without it a PRM is
made from the shipped default policy ``arith-policy`` with one training step, enough for timing: the scores
mean nothing). Starts ``prm-reward serve`` (``python -m prm.rewards.cli serve``) on a free 127.0.0.1 port in
a subprocess, waits for ``/ready``, then sends the same ``--requests`` POST /get_reward requests (one sample
each, as OpenRLHF sends them: prompt + gold or corrupted arithmetic solution, with the gold answer as label)
twice: one at a time (serial), then from ``--clients`` concurrent clients. Each stage prints a JSON line;
the last line is one object with ``requests``, ``errors``, ``throughput_rps``, ``serial_throughput_rps``,
``p50_ms``, ``p99_ms`` (the concurrent run's latencies), plus the server's batch sizes and the load average.
Targets: zero errors; concurrent throughput >= 3x serial.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Run as a script, this folder heads sys.path and benchmarks/verifiers.py would shadow the `verifiers` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import httpx  # noqa: E402

from prm.format import labels_from_first_error, split_steps  # noqa: E402
from prm.tasks import ArithmeticSourceConfig, generate_arithmetic  # noqa: E402

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", type=Path, default=None, help="PRM folder (default: a 1-step PRM from arith-policy)")
    p.add_argument("--requests", type=int, default=512, help="requests per run (serial and concurrent)")
    p.add_argument("--clients", type=int, default=32, help="concurrent clients")
    p.add_argument("--max-batch", type=int, default=64, help="server: completions per forward pass")
    p.add_argument("--forward-batch", type=int, default=None, help="server: completions per forward pass")
    p.add_argument("--max-wait-ms", type=float, default=10.0, help="server: batching latency bound")
    p.add_argument("--threads", type=int, default=1, help="server: torch CPU threads")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    p.add_argument("--dtype", choices=("auto", "float32", "bfloat16", "float16"), default="auto",
                   help="server: PRM dtype (auto: the server's choice, bf16 on CUDA and on CPUs with native bf16)")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def _emit(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


def _problems(n: int, seed: int) -> list[tuple[str, str, str, int]]:
    """(question, solution, gold, first wrong step or -1): word problems of 2-8 steps; every other solution
    has one wrong step."""
    records = generate_arithmetic(ArithmeticSourceConfig(n_ops=(2, 4, 6, 8), per_level=max(1, n // 8)), seed=seed)
    rng = random.Random(seed)
    out = []
    for i, r in enumerate(records):
        solution, first_error = r.gold_solution, -1
        if i % 2:
            steps = split_steps(solution)
            k = rng.randrange(len(steps))
            lhs, rhs = steps[k].rsplit("= ", 1)
            steps[k] = f"{lhs}= {int(rhs) + 1}"
            first_error = k
            solution = "\n".join(steps) + f"\nAnswer: {r.gold_answer}"
        out.append((r.question, solution, r.gold_answer, first_error))
    return out


def default_prm(out: Path, seed: int) -> Path:
    """A PRM trained for one step from the shipped policy: a real folder of the right size, scores meaningless."""
    from prm.training import PRMTrainConfig, train_prm

    rows = []
    for question, solution, _, first_error in _problems(64, seed + 1):
        steps = split_steps(solution)
        rows.append({"prompt": question, "completions": steps,
                     "labels": labels_from_first_error(len(steps), first_error)})
    return train_prm(rows, out, PRMTrainConfig(base_model="arith-policy", max_steps=1, eval_steps=1000,
                                               save_steps=1000, seed=seed))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(model: Path, args: argparse.Namespace, log: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    cmd = [sys.executable, "-m", "prm.rewards.cli", "serve", "--model", str(model), "--shaping", "min",
           "--host", "127.0.0.1", "--port", str(port), "--max-batch", str(args.max_batch),
           "--max-wait-ms", str(args.max_wait_ms), "--threads", str(args.threads), "--device", args.device,
           "--dtype", args.dtype,
           "--max-samples", "1", "--log-level", "warning"]
    if args.forward_batch:
        cmd += ["--forward-batch", str(args.forward_batch)]
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    proc = subprocess.Popen(cmd, cwd=PROJECT_ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 300
    while True:
        try:
            if httpx.get(f"{url}/ready", timeout=5).status_code == 200:
                return proc, url
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"the reward server did not get ready; its log:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)


async def run(url: str, bodies: list[dict], clients: int) -> tuple[float, list[float], int]:
    """Send every body once from ``clients`` concurrent workers; (wall seconds, latencies ms, errors).

    aiohttp, not httpx: httpx's async connection pool costs more CPU per request than the server itself at
    32 concurrent connections (measured here: ~115 rps against a zero-cost model, aiohttp ~1,600).
    """
    import aiohttp  # installed with `datasets` (fsspec[http])

    latencies: list[float] = []
    errors = 0
    todo = iter(bodies)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=clients), timeout=timeout) as session:

        async def worker() -> None:
            nonlocal errors
            for body in todo:
                started = time.perf_counter()
                try:
                    async with session.post(f"{url}/get_reward", json=body) as r:
                        answer = await r.json()
                    ok = r.status == 200 and answer["extra_logs"]["reward_error"] == [0.0]
                except (TimeoutError, aiohttp.ClientError, KeyError, ValueError):
                    ok = False
                latencies.append((time.perf_counter() - started) * 1000)
                errors += not ok

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        return time.perf_counter() - started, latencies, errors


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def main() -> None:
    args = _args()
    with tempfile.TemporaryDirectory(prefix="reward-bench-") as tmp:
        tmp = Path(tmp)
        model = args.model
        if model is None:
            started = time.perf_counter()
            try:
                model = default_prm(tmp / "prm", args.seed)
            except FileNotFoundError as err:
                raise SystemExit(f"{err}; or pass --model DIR, a PRM folder") from None
            _emit({"stage": "prm", "model": str(model), "base": "arith-policy", "seconds": round(time.perf_counter()
                                                                                                 - started, 1)})
        problems = _problems(args.requests, args.seed)
        bodies = [{"query": [q + "\n" + s + "</s>"], "prompts": [q + "\n"], "labels": [g]}
                  for q, s, g, _ in (problems[i % len(problems)] for i in range(args.requests))]
        proc, url = start_server(model, args, tmp / "server.log")
        try:
            asyncio.run(run(url, bodies[: 2 * args.clients], args.clients))  # warm-up: first-call costs
            wall, lat, err = asyncio.run(run(url, bodies, 1))
            serial = {"stage": "serial", "requests": len(bodies), "errors": err, "seconds": round(wall, 2),
                      "throughput_rps": round(len(bodies) / wall, 1), "p50_ms": _pct(lat, 0.5)}
            _emit(serial)
            before = httpx.get(f"{url}/health").json()["batching"]
            wall, lat, err = asyncio.run(run(url, bodies, args.clients))
            after = httpx.get(f"{url}/health").json()["batching"]
            batches = after["batches"] - before["batches"]
            concurrent = {"stage": "concurrent", "clients": args.clients, "requests": len(bodies), "errors": err,
                          "seconds": round(wall, 2), "throughput_rps": round(len(bodies) / wall, 1),
                          "mean_batch": round((after["items"] - before["items"]) / max(batches, 1), 2),
                          "largest_batch": after["largest_batch"]}
            _emit(concurrent)
        finally:
            proc.terminate()
            proc.wait(30)
    _emit({"requests": len(bodies), "errors": serial["errors"] + concurrent["errors"],
           "throughput_rps": concurrent["throughput_rps"], "serial_throughput_rps": serial["throughput_rps"],
           "speedup": round(concurrent["throughput_rps"] / serial["throughput_rps"], 2),
           "p50_ms": _pct(lat, 0.5), "p99_ms": _pct(lat, 0.99), "serial_p50_ms": serial["p50_ms"],
           "mean_batch": concurrent["mean_batch"], "clients": args.clients, "max_wait_ms": args.max_wait_ms,
           "load_average": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count()})


if __name__ == "__main__":
    main()
