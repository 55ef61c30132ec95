"""The SmolLM2 + GSM8K recipe end to end, as a user runs it (`prm-pipeline run recipes/smollm2-gsm8k.yaml`), on real
SmolLM2 text (a few minutes each on 2 CPU cores).

On GSM8K's 4 shortest test problems SmolLM2-135M reaches the gold answer in none of its 16 solutions, so every
rollout label would be 'bad': the run must stop there and say so. (The recipe itself samples 8 solutions for each of
the 24 shortest train problems, where it reaches the gold answer a few times: too long for this suite.) On 16
elementary problems in GSM8K's format it solves a quarter to a third, and every stage runs through a PRM trained on
the recipe's labels and scored on held-out solutions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.recipe import load_recipe
from prm.models.constants import COMPLETE_MARKER, SMOLLM2_NAME
from warehouse import connect

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

PROJECT_ROOT = Path(__file__).resolve().parents[2]
RECIPE = PROJECT_ROOT / "recipes" / "smollm2-gsm8k.yaml"
# Elementary word problems in GSM8K's format (question; answer ending in '#### n'), one operation each: 16 of them,
# so that the PRM's train split (by problem) holds both outcomes.
NAMES = ("Tom", "Sara", "Ben", "Mia", "Leo", "Ava", "Sam", "Zoe")


def easy_problems() -> list[dict]:
    rows = []
    for i, name in enumerate(NAMES):
        a, b = 3 + i, 2 + i % 3
        rows.append({"question": f"{name} has {a} apples and buys {b} more. How many apples does {name} have now?",
                     "answer": f"{name} has {a} + {b} = {a + b} apples.\n#### {a + b}"})
        rows.append({"question": f"A box holds {b} eggs. How many eggs are in {a} boxes?",
                     "answer": f"{a} boxes hold {a} * {b} = {a * b} eggs.\n#### {a * b}"})
    return rows


def _run(cache: Path, *overrides: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess, as a user runs it; PRMs and RL runs go to ``cache``, not the project's model cache."""
    cache.mkdir(exist_ok=True)
    converted = PROJECT_ROOT / "models" / SMOLLM2_NAME
    if (converted / COMPLETE_MARKER).is_file():  # reuse the project's conversion of the shipped GGUF
        (cache / SMOLLM2_NAME).symlink_to(converted, target_is_directory=True)
    args = [sys.executable, "-m", "pipelines.cli", "run", str(RECIPE), *(a for o in overrides for a in ("--set", o))]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PRM_MODEL_CACHE": str(cache)}
    return subprocess.run(args, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True)


def _stages(stdout: str) -> dict[str, int]:
    """asset -> rows written, from the stage table `prm-pipeline run` prints."""
    rows = [line.split() for line in stdout.splitlines()]
    return {r[1]: int(r[2].replace(",", "")) for r in rows if len(r) == 4 and r[0] in ("refresh", "prm", "rl")
            and r[2] != "-"}


# GSM8K test's 64 shortest problems, shipped beside the recipe's train slice: a fresh clone runs this test too.
TEST_SLICE = PROJECT_ROOT / "recipes" / "data" / "gsm8k-test-shortest-64.jsonl"


def test_the_recipe_reads_a_slice_shipped_in_the_repository() -> None:
    data = load_recipe(RECIPE).dataset.file()
    assert data.is_file() and PROJECT_ROOT in data.parents  # no ../shared, no network


def test_on_real_gsm8k_the_run_stops_where_smollm2_never_reaches_gold(project_home: Path, tmp_path: Path) -> None:
    test_split = TEST_SLICE
    run = _run(tmp_path / "models", f"dataset.path={test_split}", "dataset.limit=4", "sampling.n=4")
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]
    stages = _stages(run.stdout)
    assert stages["problems"] == 4 and stages["solutions"] == 16 and "rollouts" not in stages  # stopped before
    assert "check solutions_can_be_labeled           FAILED" in run.stdout
    assert "reach the gold answer" in run.stderr and "stronger policy, easier problems" in run.stderr
    con = connect(tmp_path / "warehouse")
    solutions, extracted = con.execute("SELECT count(*), count(final_answer) FROM solutions").fetchone()
    assert extracted / solutions >= 0.5  # SmolLM2 states an answer the extractor reads: the prompt's instruction


def test_the_recipe_runs_every_stage_through_a_scored_prm(project_home: Path, tmp_path: Path) -> None:
    data = tmp_path / "easy.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in easy_problems()))
    # One-operation answers take ~46 tokens on average: 128 cuts only the rambling tail (solutions and rollouts);
    # the PRM's 2 steps of 2 solutions are enough to show it trains and scores, which is what this asserts. One
    # rollout per step prefix (the recipe's 2 halve the rollouts stage) is enough for MC and OmegaPRM to label from
    # the rollouts asset's cache.
    run = _run(tmp_path / "models", f"dataset.path={data}", "dataset.source=gsm8k_easy", "dataset.limit=16",
               "sampling.n=4", "sampling.max_tokens=128", "labels.rollouts=1", "labels.omegaprm_k=1",
               "prm.max_steps=2", "prm.batch_size=2")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    stages = _stages(run.stdout)
    for stage in ("problems", "solutions", "rollouts", "mc_labels", "omegaprm_labels", "prm_training_set"):
        assert stages.get(stage, 0) > 0, (stage, run.stdout)
    assert "prm_model" in run.stdout and "prm_evaluation" in run.stdout
    assert "answer extracted" in run.stdout and "correct against gold" in run.stdout

    con = connect(tmp_path / "warehouse")
    solutions, extracted, correct = con.execute(
        "SELECT count(*), count(final_answer), count(*) FILTER (WHERE is_correct) FROM solutions").fetchone()
    assert solutions == 64 and extracted > 32 and 0 < correct < solutions  # both outcomes, from real SmolLM2 text
    (training,) = con.execute("SELECT training_json FROM models WHERE kind = 'prm'").fetchone()
    assert "smollm2-135m-instruct" in training  # the PRM's backbone is the recipe's policy
    assert con.execute("SELECT count(*) FROM step_scores").fetchone()[0] > 0  # it scored held-out steps
    models = {m for (m,) in con.execute("SELECT DISTINCT model FROM solutions UNION SELECT DISTINCT model FROM "
                                        "rollouts").fetchall()}
    assert len(models) == 1 and next(iter(models)).startswith("smollm2-135m-instruct@")
