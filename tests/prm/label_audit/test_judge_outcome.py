"""The judge's data-level check: agreement with the outcome on solutions that have a gold answer."""

from __future__ import annotations

import dagster as dg
import pytest

from prm.label_audit import JudgeOutcomeAgreement, JudgeOutcomeBand, judge_outcome_verdict


def _data(wrong_called_right: int, wrong_flagged: int, right_ok: int, right_flagged: int
          ) -> tuple[list[dict], list[dict]]:
    judgments, solutions = [], []
    groups = ((wrong_called_right, False, -1), (wrong_flagged, False, 1), (right_ok, True, -1),
              (right_flagged, True, 0))
    for g, (n, correct, first_error) in enumerate(groups):
        for i in range(n):
            sid = f"s{g}-{i}"
            judgments.append({"solution_id": sid, "first_error": first_error})
            solutions.append({"solution_id": sid, "is_correct": correct})
    # abstentions and ungraded solutions are left out of every count
    judgments += [{"solution_id": "abstain", "first_error": None}, {"solution_id": "ungraded", "first_error": -1}]
    solutions += [{"solution_id": "abstain", "is_correct": False}, {"solution_id": "ungraded", "is_correct": None}]
    return judgments, solutions


def test_counts_join_judgments_with_outcomes() -> None:
    a = JudgeOutcomeAgreement.of(*_data(17, 15, 3, 1))
    assert (a.wrong, a.wrong_called_right, a.right, a.right_called_wrong) == (32, 17, 4, 1)
    assert a.agreement == pytest.approx(15 / 32)


@pytest.mark.parametrize(
    ("counts", "severity"),
    [
        ((17, 15, 3, 1), "fail"),  # the issue: off its domain the judge named no error in 17 of 32 wrong solutions
        ((8, 24, 3, 1), "warn"),  # 75%: below the 80% warning line
        ((2, 30, 3, 1), "ok"),
        ((5, 2, 3, 1), "ok"),  # 7 wrong-outcome solutions: too few to measure, passes and says so
    ],
)
def test_verdict_band(counts: tuple[int, int, int, int], severity: str) -> None:
    verdict = judge_outcome_verdict(JudgeOutcomeAgreement.of(*_data(*counts)))
    assert verdict.severity == severity
    if severity != "ok":
        assert "stronger judge model" in verdict.message and f"in {counts[1]} of" in verdict.message
    if counts[0] + counts[1] < 8:
        assert "too few" in verdict.message


def test_band_is_configurable_and_checked() -> None:
    a = JudgeOutcomeAgreement.of(*_data(17, 15, 3, 1))
    assert judge_outcome_verdict(a, JudgeOutcomeBand(warn_below=0.4, fail_below=0.2)).severity == "ok"
    with pytest.raises(ValueError, match="fail_below"):
        JudgeOutcomeBand(warn_below=0.3, fail_below=0.6)


def _check(metadata: dict) -> dg.AssetCheckResult:
    from assets.checks import judge_agrees_with_outcomes

    with dg.DagsterInstance.ephemeral() as instance:
        instance.report_runless_asset_event(dg.AssetMaterialization(asset_key="judgments", metadata=metadata))
        return judge_agrees_with_outcomes(dg.build_asset_check_context(instance=instance))


def test_blocking_check_reads_the_data_not_the_card() -> None:
    from assets.checks import judge_agrees_with_outcomes
    from assets.verification import judge_outcome_metadata

    a = JudgeOutcomeAgreement.of(*_data(17, 15, 3, 1))
    failed = _check(judge_outcome_metadata(a, JudgeOutcomeBand()))
    assert not failed.passed and failed.severity == dg.AssetCheckSeverity.ERROR
    assert "15 of 32 solutions whose final answer is wrong" in (failed.description or "")
    warned = _check(judge_outcome_metadata(a, JudgeOutcomeBand(warn_below=0.6, fail_below=0.4)))
    assert not warned.passed and warned.severity == dg.AssetCheckSeverity.WARN
    assert not _check({"dagster/row_count": 3}).passed
    spec = next(iter(judge_agrees_with_outcomes.check_specs))
    assert spec.blocking and spec.asset_key == dg.AssetKey("judgments")
