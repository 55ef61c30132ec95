"""Multi-process PRM training: ``accelerate launch`` with 2 ranks (DDP, gloo on CPU) against one process.

Both runs train the tiny base with the same seed and steps from the same TRL-format export; the train rows
are a multiple of the global batch, so every optimizer step of both runs reads the same rows. The base's
token-classification head has its dropout (HF's default 0.1) set to 0 here: dropout is the one random draw
that differs between the runs (each rank draws masks for its own half batch), and without it the two runs
must agree to float rounding (the gradient all-reduce sums in another order), a bound tight enough to catch
a wrong global batch, loss normalisation or data order. The held-out test rows are then scored with
``load_prm(...).score_batch`` and the two models' step AUC and scores compared.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from prm.export import write_trl_stepwise
from prm.metrics import roc_auc
from prm.scoring import load_prm
from prm.training import TrainingSetConfig, build_training_set, read_prm_card
from prm.training.__main__ import main
from tests.prm.training.conftest import fill_warehouse
from warehouse import Warehouse

PROJECT_ROOT = Path(__file__).resolve().parents[3]
# The warehouse's 24 problems split by problem hash into 28 train, 10 val and 10 test solutions at these
# shares; 28 = 2 x BATCH, so no epoch ends in a partial batch (which accelerate tops up with repeated rows
# on every rank but the first, and one process does not).
SPLIT = TrainingSetConfig(method="truth", val_share=0.2, test_share=0.25)
BATCH = 14  # the global batch: 7 rows per rank with 2 processes
STEPS = 30  # 15 epochs: the held-out AUC rises well above 0.5 within them
# Noise bounds: float rounding only. Measured here (2026-11-22, 30 steps): train losses agree to 3.6e-7 at every
# step, held-out scores to 5.6e-7 on average, step AUC exactly (0.8207 both). With the head's dropout on, the
# 1- and 2-process models differ by 0.085 in mean |score| (AUC 0.83 vs 0.76), inside what a change of seed
# alone does to one process (0.07-0.12; AUC 0.83-0.88 over seeds 0-2): noise, which is why it is off here.
MAX_LOSS_DIFF = 1e-4
MAX_MEAN_SCORE_DIFF = 1e-3
MAX_AUC_DIFF = 1e-3


def _free_port() -> int:
    """A port for the rank-0 rendezvous, so this test does not collide with another run's default 29500."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(launcher: list[str], data: Path, base: Path, out: Path) -> Path:
    options = ["--data", str(data), "--out", str(out), "--base-model", str(base), "--head", "classifier",
               "--max-steps", str(STEPS), "--batch-size", str(BATCH), "--learning-rate", "1e-2", "--warmup-steps", "0",
               "--logging-steps", "1",
               "--eval-steps", "100", "--save-steps", "100", "--seed", "0", "--torch-threads", "1"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([*launcher, "-m", "prm.training", "train", *options], cwd=PROJECT_ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])  # printed by rank 0 only
    assert summary["out"] == str(out)
    return out


@pytest.fixture(scope="module")
def base_without_dropout(tiny_base: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny base with ``classifier_dropout`` 0, which AutoModelForTokenClassification reads for its head."""
    folder = shutil.copytree(tiny_base, tmp_path_factory.mktemp("base") / "no-dropout")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "classifier_dropout": 0.0}))
    return folder


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    """A TRL stepwise JSONL export of the labeled warehouse (train, val and test rows), and its test rows."""
    root = tmp_path_factory.mktemp("ddp")
    ts = build_training_set(fill_warehouse(Warehouse(root / "warehouse")).root, SPLIT)
    assert len(ts.split("train")) % BATCH == 0, "the split changed: pick BATCH dividing the train rows"
    return write_trl_stepwise(ts.rows, root / "rows.jsonl"), ts.split("test")


@pytest.fixture(scope="module")
def runs(export: tuple[Path, list[dict]], base_without_dropout: Path,
         tmp_path_factory: pytest.TempPathFactory) -> dict:
    data, _ = export
    root = tmp_path_factory.mktemp("runs")
    launch = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
              "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
              "--main_process_port", str(_free_port())]
    return {"one": _run([sys.executable], data, base_without_dropout, root / "one"),
            "two": _run(launch, data, base_without_dropout, root / "two")}


def _evaluate(folder: Path, test_rows: list[dict]) -> tuple[list[float], float]:
    """Held-out step scores (P(good)) and their step ROC-AUC against the labels."""
    scores = load_prm(folder).score_batch([(r["prompt"], r["completions"]) for r in test_rows])
    flat = [s for row in scores for s in row]
    auc = roc_auc([bool(g) for r in test_rows for g in r["labels"]], flat)
    assert auc is not None, "the test rows need good and bad steps"
    return flat, auc


@pytest.mark.slow
def test_two_processes_train_the_same_prm_as_one(runs: dict, export: tuple[Path, list[dict]]) -> None:
    one, two = read_prm_card(runs["one"]), read_prm_card(runs["two"])
    assert (one["world_size"], one["per_device_batch_size"]) == (1, BATCH)
    assert (two["world_size"], two["per_device_batch_size"]) == (2, BATCH // 2)  # really 2 ranks
    assert one["global_step"] == two["global_step"] == STEPS
    assert one["train_tokens"] == two["train_tokens"]  # the same rows per optimizer step, none repeated
    losses = zip(one["loss_history"], two["loss_history"], strict=True)
    loss_diff = max(abs(a - b) for (_, a), (_, b) in losses)
    print(f"max train loss difference over {STEPS} steps: {loss_diff:.1e}")
    assert loss_diff <= MAX_LOSS_DIFF  # the global batch's mean over the same rows at every step
    assert sorted(p.name for p in runs["two"].iterdir()) == sorted(p.name for p in runs["one"].iterdir())

    _, test_rows = export
    (scores_one, auc_one), (scores_two, auc_two) = _evaluate(runs["one"], test_rows), _evaluate(runs["two"], test_rows)
    mean_diff = sum(abs(a - b) for a, b in zip(scores_one, scores_two, strict=True)) / len(scores_one)
    print(f"step AUC 1 process {auc_one:.4f}, 2 processes {auc_two:.4f}; mean |score diff| {mean_diff:.1e} over "
          f"{len(scores_one)} steps")
    assert auc_one > 0.6  # it learned something, so agreeing is not two untrained heads agreeing
    assert abs(auc_one - auc_two) <= MAX_AUC_DIFF
    assert mean_diff <= MAX_MEAN_SCORE_DIFF


def test_a_launch_that_started_one_of_several_processes_is_refused(monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture,
                                                                   tmp_path: Path) -> None:
    """``accelerate launch --cpu --num_processes 2`` without mpirun runs the command once: stop, say what to run."""
    monkeypatch.setenv("ACCELERATE_USE_CPU", "True")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert main(["train", "--data", str(tmp_path), "--out", str(tmp_path / "prm")]) == 1
    assert "accelerate launch --multi_gpu --num_processes N" in capsys.readouterr().err
