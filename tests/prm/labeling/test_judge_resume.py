"""The judge resumes like the rollout labelers: a second ``judge_partition`` over a real warehouse judges only what
is new or stale, and starts no engine when nothing is left (a killed refresh re-judged every solution before)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path

import pytest

from prm.generation import GenerationBackend
from prm.labeling.judge import JudgeConfig
from prm.labeling.partition import judge_partition
from tests.prm.labeling.test_judge import ScriptedBackend
from warehouse import Warehouse

SOURCE, DAY = "arith", "2026-11-20"
STEPS = ("1+2 = 3", "3+3 = 6", "6*2 = 12")
K = 2


class Engines:
    """``backend`` for judge_partition: each call starts one scripted engine (every vote says step 1 is wrong)."""

    def __init__(self) -> None:
        self.started: list[ScriptedBackend] = []

    def __call__(self) -> GenerationBackend:
        self.started.append(ScriptedBackend([[r"\boxed{1}"] * 3] * 8))
        return self.started[-1]

    def judged(self) -> int:
        """Solutions sent to the engines so far."""
        return sum(len(call) for engine in self.started for call in engine.calls)


def _write_partition(wh: Warehouse, sample_ids: range, at: dt.datetime) -> None:
    """Problems, ``ok`` solutions of 3 steps and their steps, as the ``solutions`` asset writes them (replacing)."""
    text = "\n".join(STEPS)
    starts = [text.index(s) for s in STEPS]
    kw = {"source": SOURCE, "day": DAY, "replace": True}
    wh.write("problems", [{"problem_id": "p", "task": "arith_chain", "split": "train", "question": "(1+2+3)*2?",
                           "gold_answer": "12"}], **kw)
    wh.write("solutions", [{"solution_id": f"s{i}", "problem_id": "p", "sample_idx": i, "text": text, "n_steps": 3,
                            "status": "ok", "model": "tiny-policy@1", "created_at": at} for i in sample_ids], **kw)
    spans = list(enumerate(zip(STEPS, starts, strict=True)))
    wh.write("steps", [{"solution_id": f"s{i}", "problem_id": "p", "step_idx": k, "text": s, "char_start": c,
                        "char_end": c + len(s)} for i in sample_ids for k, (s, c) in spans], **kw)


def _judge(wh: Warehouse, engines: Engines, config: JudgeConfig, cap: int | None = None):
    return judge_partition(wh, engines, config, source=SOURCE, day=DAY, run_id="r", policy_prompt=lambda q: q,
                           max_solutions=cap)


@pytest.fixture
def config(tiny_policy_dir: Path) -> JudgeConfig:
    """k=2 sampled votes; the judge's prompt formatted with the tiny policy's tokenizer (a real one, no download)."""
    return JudgeConfig(k=K, temperature=0.7, model=str(tiny_policy_dir))


def test_a_second_run_judges_nothing_and_starts_no_engine(wh: Warehouse, config: JudgeConfig) -> None:
    _write_partition(wh, range(3), dt.datetime.now(dt.UTC))
    engines = Engines()
    first = _judge(wh, engines, config)
    assert (len(engines.started), engines.judged(), first.reused) == (1, 3, 0)
    versions = (wh.version("judgments"), wh.version("step_labels"))

    again = _judge(wh, engines, config)
    assert (len(engines.started), engines.judged(), again.reused) == (1, 3, 3)  # no engine, no solution judged
    assert (wh.version("judgments"), wh.version("step_labels")) == versions  # nothing rewritten
    # The run reads as the first did: the same judgments (the outcome check reads them), labels and costs.
    assert [j.judgment_id for j in again.judgments] == [j.judgment_id for j in first.judgments]
    assert [json.loads(j.votes_json) for j in again.judgments] == [[1] * K] * 3
    assert sorted(lb.to_row().items() for lb in again.labels) == sorted(lb.to_row().items() for lb in first.labels)
    assert again.cost_tokens == first.cost_tokens > 0


def test_only_new_stale_or_differently_judged_solutions_are_judged_again(wh: Warehouse, config: JudgeConfig) -> None:
    t0 = dt.datetime.now(dt.UTC)
    _write_partition(wh, range(2), t0)
    engines = Engines()
    _judge(wh, engines, config)
    first_rows = {r["solution_id"]: r for r in wh.read_partition("judgments", SOURCE, DAY).to_pylist()}

    _write_partition(wh, range(3), t0)  # a third sample; the first two keep their written time
    run = _judge(wh, engines, config)
    assert (len(engines.started), engines.judged(), run.reused) == (2, 3, 2)
    rows = {r["solution_id"]: r for r in wh.read_partition("judgments", SOURCE, DAY).to_pylist()}
    assert sorted(rows) == ["s0", "s1", "s2"]
    assert all(rows[s]["run_id"] == first_rows[s]["run_id"] for s in ("s0", "s1"))  # kept with their provenance
    labels = wh.read_partition("step_labels", SOURCE, DAY).to_pylist()
    assert sorted((r["solution_id"], r["step_idx"]) for r in labels) == [(f"s{i}", k) for i in range(3)
                                                                         for k in range(3)]

    _judge(wh, engines, config, cap=2)  # a cap that leaves s2 out: its rows go, as a fresh capped run would have none
    assert engines.judged() == 3 and sorted(r["solution_id"] for r in wh.read_partition(
        "judgments", SOURCE, DAY).to_pylist()) == ["s0", "s1"]

    more = dataclasses.replace(config, k=3)
    _judge(wh, engines, more)  # other settings: all judged again
    assert engines.judged() == 6
    assert {r["n_votes"] for r in wh.read_partition("judgments", SOURCE, DAY).to_pylist()} == {3}

    _write_partition(wh, range(3), dt.datetime.now(dt.UTC))  # re-sampled: same ids, maybe new texts
    run = _judge(wh, engines, more)
    assert (engines.judged(), run.reused) == (9, 0)
    assert len(wh.read_partition("judgments", SOURCE, DAY)) == 3
