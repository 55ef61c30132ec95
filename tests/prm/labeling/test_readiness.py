"""Runs that refuse garbage: counts of the sampled solutions, the verdict, and the blocking Dagster check."""

from __future__ import annotations

import dagster as dg
import pytest

from prm.datagen.synthetic import SYNTHETIC_MODEL
from prm.labeling.readiness import ReadinessThresholds, SolutionCounts, readiness


def _row(pid: str, answer: str | None, correct: bool | None, finish: str = "stop", status: str = "ok",
         model: str = "smollm2-135m-instruct@abc") -> dict:
    return {"problem_id": pid, "model": model, "status": status, "final_answer": answer, "is_correct": correct,
            "finish_reason": finish}


# The SmolLM2 run: 16 solutions, most without an answer the extractor read, none correct.
SMOLLM2_BARE = [_row(f"p{i // 2}", None, None, "length" if i % 3 == 0 else "stop") for i in range(14)] + [
    _row("p7", "72", False), _row("p7", "9", False)]


def test_counts_of_stored_rows() -> None:
    rows = [*SMOLLM2_BARE, _row("logic", "x", True, model=SYNTHETIC_MODEL), _row("p0", None, None, status="error")]
    counts = SolutionCounts.from_rows(rows)
    assert (counts.solutions, counts.errors, counts.no_answer, counts.truncated, counts.correct) == (16, 1, 14, 5, 0)
    assert (counts.problems, counts.problems_solved) == (8, 0)
    meta = counts.metadata()
    assert meta["no_answer_share"] == 0.875 and meta["n_truncated"] == 5
    assert SolutionCounts.from_metadata(meta) == counts


@pytest.mark.parametrize(
    ("rows", "cause", "words"),
    [
        (SMOLLM2_BARE, "no_answers", ("14 of 16 solutions (88%)", "answer-format instruction", "max_tokens")),
        ([_row(f"p{i}", "5", False) for i in range(6)], "never_correct",
         ("0 of 6 solutions reach the gold answer", "stronger policy", "easier problems")),
        ([_row("p0", None, None, status="error")], "no_solutions", ("1 requests failed",)),
        ([_row("p0", "5", True), _row("p0", None, None), _row("p1", "3", False)], "ready", ("1 of 3",)),
        ([_row("logic", "x", True, model=SYNTHETIC_MODEL)], "ready", ("program-written",)),
    ],
)
def test_verdict_names_the_real_cause(rows: list[dict], cause: str, words: tuple[str, ...]) -> None:
    verdict = readiness(SolutionCounts.from_rows(rows))
    assert verdict.cause == cause and verdict.passed == (cause == "ready")
    for word in words:
        assert word in verdict.message


def test_thresholds_are_configurable_and_checked() -> None:
    counts = SolutionCounts.from_rows(SMOLLM2_BARE)
    assert readiness(counts, ReadinessThresholds(max_no_answer_share=1.0, min_correct=0)).passed
    assert readiness(counts, ReadinessThresholds(max_no_answer_share=1.0)).cause == "never_correct"
    with pytest.raises(ValueError, match=r"max_no_answer_share=1\.5 must be a share"):
        ReadinessThresholds(max_no_answer_share=1.5)
    with pytest.raises(ValueError, match="min_correct=-1"):
        ReadinessThresholds(min_correct=-1)


def _check(metadata: dict) -> dg.AssetCheckResult:
    from assets.checks import solutions_can_be_labeled

    with dg.DagsterInstance.ephemeral() as instance:
        instance.report_runless_asset_event(dg.AssetMaterialization(asset_key="solutions", metadata=metadata))
        context = dg.build_asset_check_context(instance=instance)
        return solutions_can_be_labeled(context)


def test_blocking_check_reads_the_materialization_and_its_thresholds() -> None:
    """The check the `solutions` asset carries: it fails on the issue's run (the run was green before)."""
    meta = SolutionCounts.from_rows(SMOLLM2_BARE).metadata()
    failed = _check({**meta, "max_no_answer_share": 0.5, "min_correct": 1})
    assert not failed.passed and "state no final answer" in (failed.description or "")
    assert failed.metadata["cause"].value == "no_answers"
    relaxed = _check({**meta, "max_no_answer_share": 1.0, "min_correct": 0})
    assert relaxed.passed
    assert not _check({"dagster/row_count": 3}).passed  # no counts: materialize again


def test_the_check_is_blocking() -> None:
    from assets.checks import solutions_can_be_labeled

    spec = next(iter(solutions_can_be_labeled.check_specs))
    assert spec.blocking and spec.asset_key == dg.AssetKey("solutions")
