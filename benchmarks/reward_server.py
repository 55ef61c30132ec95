"""Reward server throughput: concurrent OpenRLHF-style clients, one request at a time, and the concurrent
clients again beside hostile ones, all against one server.

Run: ``.venv/bin/python benchmarks/reward_server.py`` (``--model DIR`` for a PRM folder; without it a PRM is
made from the shipped default policy ``arith-policy`` with one training step, enough for timing: the scores
mean nothing). Starts ``prm-reward serve`` (``python -m prm.reward_server.cli serve``) on a free 127.0.0.1 port in
a subprocess, waits for ``/ready``, then sends POST /get_reward requests (one sample each, as OpenRLHF sends
them: prompt + gold or corrupted arithmetic solution, with the gold answer as label): the first
``--serial-requests`` one at a time (serial); all ``--requests`` from ``--clients`` concurrent clients
(clean); the same again while ``--hostile-clients`` more clients loop over hostile bodies (hostile: a
solution followed by 200k ``<pad>``, a solution of 900-character steps far past the PRM's context, 1,000
short steps past it, 100,000 one-line steps over ``--max-steps``; all but the third near the 1 MiB body
limit); and the same again beside one client holding ``--half-open`` half-open connections (connected, silent,
each reopened as soon as the server closes it: tests/prm/reward_server/half_open_flood.py, a process of its own),
more than the server's connection cap of 1,024. During the concurrent runs a thread polls ``GET /health`` every
100 ms and times it.

Each stage prints a JSON line; the last line is one object with ``requests``, ``errors``, ``throughput_rps``
(clean), ``hostile_clients_throughput_rps`` and ``hostile_ratio`` (hostile / clean), ``hostile_errors`` (honest
requests failed beside the hostile bodies) beside ``half_open_errors`` (honest requests failed beside the
half-open connections) and ``half_open`` (that run's figures), ``serial_throughput_rps``,
``p50_ms``/``p99_ms`` (clean latencies), ``health_ms`` (p50/p99/max of /health, clean and under hostile load),
``server_peak_rss_mb`` (the server process's peak resident memory, VmHWM; ``server_rss_mb_after_warmup`` for
comparison), plus batch sizes and the load average. Targets: zero honest errors (half-open included); clean
throughput >= 3x serial; hostile >= 0.8x clean.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

# Run as a script, this folder heads sys.path: the project root goes first, for benchmarks.* and tests.*.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from benchmarks import workload
from warehouse import PROJECT_ROOT


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", type=Path, default=None, help="PRM folder (default: a 1-step PRM from arith-policy)")
    p.add_argument("--requests", type=int, default=2048, help="requests per concurrent run (clean and hostile)")
    p.add_argument("--serial-requests", type=int, default=256, help="requests sent one at a time")
    p.add_argument("--clients", type=int, default=64, help="concurrent honest clients")
    p.add_argument("--hostile-clients", type=int, default=4, help="clients sending hostile bodies beside them")
    p.add_argument("--half-open", type=int, default=1_100,
                   help="half-open connections one client holds beside the honest ones (0: skip that run)")
    p.add_argument("--max-batch", type=int, default=64, help="server: completions per forward pass")
    p.add_argument("--forward-batch", type=int, default=None, help="server: completions per forward pass")
    p.add_argument("--max-wait-ms", type=float, default=10.0, help="server: batching latency bound")
    p.add_argument("--threads", type=int, default=1, help="server: torch CPU threads")
    p.add_argument("--pace", type=float, default=None, help="server: --pace (default: the server's)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    p.add_argument("--dtype", choices=("auto", "float32", "bfloat16", "float16"), default="auto",
                   help="server: PRM dtype (auto: the server's choice, bf16 on CUDA and on CPUs with native bf16)")
    p.add_argument("--engine", choices=("transformers", "vllm"), default="transformers",
                   help="server: scoring engine (vllm: the PRM through vLLM's pooling runner)")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def _emit(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(model: Path, args: argparse.Namespace, log: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    cmd = [sys.executable, "-m", "prm.reward_server.cli", "serve", "--model", str(model), "--shaping", "min",
           "--host", "127.0.0.1", "--port", str(port), "--max-batch", str(args.max_batch),
           "--max-wait-ms", str(args.max_wait_ms), "--threads", str(args.threads), "--device", args.device,
           "--dtype", args.dtype, "--engine", args.engine,
           "--max-samples", "1", "--log-level", "warning"]
    if args.forward_batch:
        cmd += ["--forward-batch", str(args.forward_batch)]
    if args.pace is not None:
        cmd += ["--pace", str(args.pace)]
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


def hostile_bodies(problems: list[tuple[str, str, str, int]]) -> list[bytes]:
    """/get_reward bodies a hostile (or broken) policy client sends: each costs the server far more to read
    than to answer if it is not bounded. JSON-encoded once, since the client is on the same machine."""
    question, solution, gold, _ = problems[0]
    long_steps = "\n".join(f"{k}+" + "1" * 900 + f" = {k + 1}" for k in range(1000))  # ~900 kB, 1,000 steps
    short_steps = "\n".join(f"{k}+1 = {k + 1}" for k in range(1000))  # ~12 kB, past a 1k-token context
    one_liners = "1+1 = 2\n" * 100_000  # 800 kB (900 kB as JSON): more steps than --max-steps
    texts = [solution + "</s>" + "<pad>" * 200_000, long_steps, short_steps, one_liners]
    return [json.dumps({"query": [question + "\n" + t], "prompts": [question + "\n"], "labels": [gold]}).encode()
            for t in texts]


@dataclass
class Phase:
    """What one run measured."""

    seconds: float
    latencies_ms: list[float]
    errors: int
    hostile: Counter = field(default_factory=Counter)  # HTTP status (or "error") of each hostile request


async def run(url: str, bodies: list[dict], clients: int, hostile: list[bytes] = (),
              hostile_clients: int = 0) -> Phase:
    """Send every body once from ``clients`` concurrent workers while ``hostile_clients`` more loop over the
    ``hostile`` bodies until the honest ones are done.

    aiohttp, not httpx: httpx's async connection pool costs more CPU per request than the server itself at
    32 concurrent connections (measured here: ~115 rps against a zero-cost model, aiohttp ~1,600).
    """
    import aiohttp  # installed with `datasets` (fsspec[http])

    latencies: list[float] = []
    errors = 0
    statuses: Counter = Counter()
    todo = iter(bodies)
    done = asyncio.Event()  # the honest clients are through
    timeout = aiohttp.ClientTimeout(total=120)
    connector = aiohttp.TCPConnector(limit=clients + hostile_clients)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

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

        async def attacker(k: int) -> None:
            while not done.is_set():
                body = hostile[k % len(hostile)]
                k += 1
                try:
                    async with session.post(f"{url}/get_reward", data=body,
                                            headers={"Content-Type": "application/json"}) as r:
                        await r.read()
                    statuses[r.status] += 1
                except (TimeoutError, aiohttp.ClientError):
                    statuses["error"] += 1

        attackers = [asyncio.create_task(attacker(k)) for k in range(hostile_clients)]
        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        wall = time.perf_counter() - started
        done.set()
        for task in attackers:  # a hostile request still in flight may be paced for seconds: not waited for
            task.cancel()
        await asyncio.gather(*attackers, return_exceptions=True)
        return Phase(wall, latencies, errors, statuses)


class HealthProbe:
    """``GET /health`` every ``every_s`` from a thread of its own, timing each answer (ms)."""

    def __init__(self, url: str, every_s: float = 0.1) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.host, self.port, self.every_s = host, int(port), every_s
        self.latencies: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> HealthProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(120)

    def _run(self) -> None:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        while not self._stop.wait(self.every_s):
            started = time.perf_counter()
            try:
                conn.request("GET", "/health")
                conn.getresponse().read()
                self.latencies.append((time.perf_counter() - started) * 1000)
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection(self.host, self.port, timeout=120)

    def summary(self) -> dict[str, float]:
        lat = self.latencies or [float("nan")]
        return {"p50": _pct(lat, 0.5), "p99": _pct(lat, 0.99), "max": round(max(lat), 2), "n": len(self.latencies)}


class HalfOpenFlood:
    """One client holding ``n`` half-open connections to ``url`` (tests/prm/reward_server/half_open_flood.py in a
    process of its own), reopening each the server closes, while the ``with`` block runs."""

    SCRIPT = PROJECT_ROOT / "tests" / "prm" / "reward_server" / "half_open_flood.py"

    def __init__(self, url: str, n: int) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.cmd = [sys.executable, str(self.SCRIPT), host, port, str(n)]
        self.stats: dict = {}

    def __enter__(self) -> HalfOpenFlood:
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            self.proc.kill()
            raise SystemExit("the half-open flood did not connect; is ulimit -n above --half-open?")
        time.sleep(1.0)  # the server accepts the backlog: the cap is full before the honest clients start
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.stdin.close()
        self.stats = json.loads(self.proc.stdout.readline() or "{}")
        self.proc.wait(30)


def memory_mb(pid: int, key: str = "VmHWM") -> float | None:
    """A process's memory from /proc (Linux) in MiB: ``VmHWM`` its peak resident size, ``VmRSS`` the current
    one; None where /proc does not say."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{key}:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


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
                model = workload.default_prm(tmp / "prm", args.seed)
            except FileNotFoundError as err:
                raise SystemExit(f"{err}; or pass --model DIR, a PRM folder") from None
            _emit({"stage": "prm", "model": str(model), "base": "arith-policy", "seconds": round(time.perf_counter()
                                                                                                 - started, 1)})
        problems = workload.problems(args.requests, args.seed)
        bodies = [{"query": [q + "\n" + s + "</s>"], "prompts": [q + "\n"], "labels": [g]}
                  for q, s, g, _ in (problems[i % len(problems)] for i in range(args.requests))]
        hostile = hostile_bodies(problems)
        proc, url = start_server(model, args, tmp / "server.log")
        try:
            asyncio.run(run(url, bodies[: 2 * args.clients], args.clients))  # warm-up: first-call costs
            warm_rss = memory_mb(proc.pid, "VmRSS")
            phase = asyncio.run(run(url, bodies[: args.serial_requests], 1))
            serial = {"stage": "serial", "requests": len(phase.latencies_ms), "errors": phase.errors,
                      "seconds": round(phase.seconds, 2),
                      "throughput_rps": round(len(phase.latencies_ms) / phase.seconds, 1),
                      "p50_ms": _pct(phase.latencies_ms, 0.5)}
            _emit(serial)
            stages = {}
            for name, hostile_clients in (("concurrent", 0), ("hostile", args.hostile_clients)):
                before = httpx.get(f"{url}/health").json()["batching"]
                with HealthProbe(url) as probe:
                    phase = asyncio.run(run(url, bodies, args.clients, hostile, hostile_clients))
                after = httpx.get(f"{url}/health").json()["batching"]
                batches = after["batches"] - before["batches"]
                stages[name] = {"stage": name, "clients": args.clients, "hostile_clients": hostile_clients,
                                "requests": len(bodies), "errors": phase.errors, "seconds": round(phase.seconds, 2),
                                "throughput_rps": round(len(bodies) / phase.seconds, 1),
                                "p50_ms": _pct(phase.latencies_ms, 0.5), "p99_ms": _pct(phase.latencies_ms, 0.99),
                                "mean_batch": round((after["items"] - before["items"]) / max(batches, 1), 2),
                                "health_ms": probe.summary(),
                                "hostile_statuses": {str(k): v for k, v in sorted(phase.hostile.items(), key=str)},
                                "server_peak_rss_mb": memory_mb(proc.pid)}
                _emit(stages[name])
            if args.half_open:
                with HealthProbe(url) as probe, HalfOpenFlood(url, args.half_open) as flood:
                    phase = asyncio.run(run(url, bodies, args.clients))
                stages["half_open"] = {"stage": "half_open", "clients": args.clients,
                                       "half_open_connections": args.half_open, "requests": len(bodies),
                                       "errors": phase.errors, "seconds": round(phase.seconds, 2),
                                       "throughput_rps": round(len(bodies) / phase.seconds, 1),
                                       "p50_ms": _pct(phase.latencies_ms, 0.5),
                                       "p99_ms": _pct(phase.latencies_ms, 0.99), "health_ms": probe.summary(),
                                       "flood_reopened": flood.stats.get("reopened")}
                _emit(stages["half_open"])
        finally:
            proc.terminate()
            proc.wait(30)
    clean, attacked, half_open = stages["concurrent"], stages["hostile"], stages.get("half_open")
    _emit({"requests": len(bodies), "errors": serial["errors"] + clean["errors"] + attacked["errors"]
           + (half_open["errors"] if half_open else 0),
           "hostile_errors": attacked["errors"], "half_open_errors": half_open["errors"] if half_open else None,
           "half_open": half_open,
           "throughput_rps": clean["throughput_rps"], "hostile_clients_throughput_rps": attacked["throughput_rps"],
           "hostile_ratio": round(attacked["throughput_rps"] / clean["throughput_rps"], 2),
           "serial_throughput_rps": serial["throughput_rps"],
           "speedup": round(clean["throughput_rps"] / serial["throughput_rps"], 2),
           "p50_ms": clean["p50_ms"], "p99_ms": clean["p99_ms"], "hostile_p50_ms": attacked["p50_ms"],
           "hostile_p99_ms": attacked["p99_ms"], "serial_p50_ms": serial["p50_ms"],
           "health_ms": {"clean": clean["health_ms"], "hostile": attacked["health_ms"]},
           "hostile_requests": attacked["hostile_statuses"], "server_rss_mb_after_warmup": warm_rss,
           "server_peak_rss_mb": attacked["server_peak_rss_mb"],
           "mean_batch": clean["mean_batch"], "clients": args.clients, "hostile_clients": args.hostile_clients,
           "max_wait_ms": args.max_wait_ms, "load_average": [round(x, 2) for x in os.getloadavg()],
           "cpus": os.cpu_count()})


if __name__ == "__main__":
    main()
