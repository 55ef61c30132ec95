"""The demo's PRM half works on every day: 30 consecutive days of the demo's own partition, sampled by the
shipped policy on a real vLLM engine, split, and evaluated with a real PRM.

The demo's partition is small (24 problems, 4 samples each), and a plain hash split by problem put no wrong
solution into validation on 2026-11-24, so evaluation could not choose a threshold and ``make demo`` failed.
The split is now stratified by outcome; a day whose data truly lacks an outcome falls back to the default
threshold with a check warning, never a failed run.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from assets.generation import SolutionsConfig
from assets.prm import PRMDataConfig
from assets.problems import ProblemsConfig
from assets.resources import GenerationResource
from prm.datagen.solutions import sample_solution_rows
from prm.evaluation import heldout_solutions
from prm.evaluation.folder import evaluate_folder
from prm.generation import make_backend
from prm.models import model_version, prompter_for
from prm.tasks.sources import load_source
from prm.training import build_training_set, problem_split, stratified_splits
from prm.training.splits import held_out_outcomes
from tests.tiny_models import TinyModels
from warehouse import Warehouse, connect

FIRST_DAY = dt.date(2026, 11, 1)
N_DAYS = 30

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo_days(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Warehouse]:
    """One fresh warehouse per day holding the demo's problems and policy solutions for that day, all sampled
    in one engine call with the demo's generation and sampling settings."""
    days = [(FIRST_DAY + dt.timedelta(days=i)).isoformat() for i in range(N_DAYS)]
    problems_config, sampling = ProblemsConfig(), SolutionsConfig()
    arith = problems_config.to_library()
    problems = {day: [r.to_row() for r in load_source("arith", day, arith=arith, seed=problems_config.seed,
                                                      inbox=Path("/nonexistent")).records] for day in days}
    generation = GenerationResource()  # the demo's engine settings
    backend = make_backend(generation.config())
    try:
        # Days can draw the same problem; on a fresh root per day each has the same solutions (ids are seeded).
        everything = list({p["problem_id"]: p for day in days for p in problems[day]}.values())
        sols, steps, _ = sample_solution_rows(
            backend, everything, prompter_for(generation.model), model=model_version(generation.model),
            n=sampling.n_samples, seed=sampling.seed, max_tokens=sampling.max_tokens, temperature=sampling.temperature)
    finally:
        backend.close()
    out = {}
    for day in days:
        ids = {p["problem_id"] for p in problems[day]}
        wh = Warehouse(tmp_path_factory.mktemp(f"day-{day}"))
        kw = {"source": "arith", "day": day}
        wh.write("problems", problems[day], **kw)
        wh.write("solutions", [s for s in sols if s["problem_id"] in ids], **kw)
        wh.write("steps", [s for s in steps if s["problem_id"] in ids], **kw)
        out[day] = wh
    return out


@pytest.fixture(scope="module")
def tiny_prm(tiny_models: TinyModels) -> Path:
    return tiny_models.prm(1024)


def test_every_day_splits_with_both_outcomes_and_evaluates(demo_days: dict[str, Warehouse], tiny_prm: Path) -> None:
    config = PRMDataConfig(method="truth", source="arith").to_library()
    hash_split_failures = []
    for day, wh in demo_days.items():
        con = connect(wh.root)
        ts = build_training_set(con, config)  # the train split keeps both classes (it raises otherwise)
        heldout = heldout_solutions(con, stratified_splits(con, config), source="arith")
        outcomes = held_out_outcomes(heldout)
        every = held_out_outcomes({"all": [s for rows in heldout_solutions(con, lambda *_: "all", ("all",)).values()
                                           for s in rows]})["all"]
        assert every["wrong"] and every["right"], f"{day}: the policy's samples lack an outcome: {every}"
        for split in ("val", "test"):
            assert outcomes[split]["wrong"] and outcomes[split]["right"], f"{day}: {split} lacks an outcome: {outcomes}"
        ev = evaluate_folder(tiny_prm, heldout, "truth")
        f1 = next(r for r in ev.rows if r["metric"] == "processbench_f1" and r["model"] == ev.model)
        assert '"chosen_on": "validation"' in f1["detail_json"], (day, f1)
        assert {r["split"] for r in ts.rows} == {"train", "val", "test"}
        plain = heldout_solutions(con, lambda pid, n: problem_split(pid, n, config), source="arith")
        if not all(held_out_outcomes(plain)["val"].values()):
            hash_split_failures.append(day)
    # What the stratification fixed: the days a plain hash split left without an outcome in validation.
    print(f"days the plain hash split could not evaluate: {hash_split_failures}")
