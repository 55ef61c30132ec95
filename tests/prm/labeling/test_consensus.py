"""Consensus policies on small hand-built tables: which solutions each keeps, the rows, and the report."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from prm.labeling.consensus import (
    ConsensusConfig,
    SolutionVerdicts,
    apply_policy,
    collect_verdicts,
    consensus_report,
    formal_first_error,
)
from warehouse.schemas import TABLES
from warehouse.validate import validate_rows

# Four 3-step solutions: truth first errors a=1, b=-1, c=0, d=2.
TRUTH_FE = {"a": 1, "b": -1, "c": 0, "d": 2}
STEPS = [{"solution_id": s, "problem_id": "p", "step_idx": k, "is_correct_truth": fe == -1 or k < fe}
         for s, fe in TRUTH_FE.items() for k in range(3)]
SOLUTIONS = [{"solution_id": s, "first_error_truth": fe} for s, fe in TRUTH_FE.items()]


def _labels(method: str, fes: dict[str, int | None], state_fe: bool = True) -> list[dict]:
    rows = []
    for sid, fe in fes.items():
        for k in range(3):
            hard = None if fe is None else fe == -1 or k < fe
            rows.append({"solution_id": sid, "problem_id": "p", "step_idx": k, "method": method, "hard_label": hard,
                         "first_error": fe if state_fe else None})
    return rows


MC = _labels("mc", {"a": 1, "b": -1, "c": 1, "d": 0}, state_fe=False)  # first error from hard labels
JUDGMENTS = [{"solution_id": s, "first_error": fe} for s, fe in {"a": 1, "b": -1, "c": 0, "d": None}.items()]
VERIFICATIONS = [  # formal decides a (error at 1), c (error at 0); b is unknown at step 1; d has no rows
    *({"solution_id": "a", "step_idx": k, "verifier": "sympy", "status": st}
      for k, st in enumerate(["correct", "incorrect", "unverifiable"])),
    {"solution_id": "b", "step_idx": 0, "verifier": "sympy", "status": "correct"},
    {"solution_id": "b", "step_idx": 1, "verifier": "sympy", "status": "unverifiable"},
    {"solution_id": "c", "step_idx": 0, "verifier": "sympy", "status": "correct"},
    {"solution_id": "c", "step_idx": 0, "verifier": "z3", "status": "incorrect"},
]


@pytest.fixture
def verdicts() -> list[SolutionVerdicts]:
    return collect_verdicts(STEPS, MC, JUDGMENTS, VERIFICATIONS)


def test_collect_verdicts(verdicts: list[SolutionVerdicts]) -> None:
    got = {v.solution_id: dict(v.first_errors) for v in verdicts}
    # Each verifier is its own method, named as in the tables (never a pooled "formal").
    assert got == {"a": {"mc": 1, "judge": 1, "sympy": 1}, "b": {"mc": -1, "judge": -1, "sympy": None},
                   "c": {"mc": 1, "judge": 0, "sympy": None, "z3": 0}, "d": {"mc": 0, "judge": None}}
    assert all(v.n_steps == 3 for v in verdicts)


@pytest.mark.parametrize(
    "policy,kept,first_errors",
    [
        ("mc_judge_agree", ("a", "b"), [1, -1]),
        ("formal_override", ("a", "b", "c", "d"), [1, -1, 0, 0]),  # formal where decided, else MC
        ("all_agree", ("a", "b"), [1, -1]),  # c: mc disagrees; d: only MC has a verdict
    ],
)
def test_policies(verdicts: list[SolutionVerdicts], policy: str, kept: tuple[str, ...],
                  first_errors: list[int]) -> None:
    run = apply_policy(verdicts, ConsensusConfig(policy=policy))
    assert run.kept == kept
    assert [lb.first_error for lb in run.labels if lb.step_idx == 0] == first_errors
    assert {lb.method for lb in run.labels} == {"consensus"}
    rows = validate_rows("step_labels", TABLES["step_labels"], run.rows(),
                         {"run_id": "r", "created_at": datetime(2026, 1, 1, tzinfo=UTC), "source": "arith",
                          "day": "2026-01-01"})
    assert rows.num_rows == 3 * len(kept)


def test_labels_follow_the_first_error(verdicts: list[SolutionVerdicts]) -> None:
    run = apply_policy(verdicts, ConsensusConfig(policy="formal_override"))
    a = [lb for lb in run.labels if lb.solution_id == "a"]
    assert [(lb.hard_label, lb.status) for lb in a] == [(True, "labeled"), (False, "labeled"),
                                                        (False, "by_convention")]
    c = [lb for lb in run.labels if lb.solution_id == "c"]
    assert [lb.soft_label for lb in c] == [pytest.approx(1 / 3), 0.0, 0.0]  # MC passes step 0, judge/formal do not


def test_all_agree_min_methods() -> None:
    lone = [SolutionVerdicts("d", "p", 3, {"mc": 0, "judge": None})]
    assert apply_policy(lone, ConsensusConfig(policy="all_agree")).kept == ()
    assert apply_policy(lone, ConsensusConfig(policy="all_agree", min_methods=1)).kept == ("d",)


def test_out_of_range_first_error_is_dropped() -> None:
    v = [SolutionVerdicts("x", "p", 2, {"mc": 5, "judge": 5})]
    assert apply_policy(v).kept == ()


def test_report_kept_share_and_audit(verdicts: list[SolutionVerdicts]) -> None:
    reports = {r.policy: r for r in consensus_report(verdicts, STEPS, SOLUTIONS)}
    agree, formal = reports["mc_judge_agree"], reports["formal_override"]
    assert (agree.n_kept, agree.kept_share) == (2, 0.5)
    assert agree.audit is not None and agree.audit.n_solutions == 2 and agree.audit.processbench_f1 == 1.0
    assert formal.kept_share == 1.0 and formal.audit is not None
    assert formal.audit.first_error_acc == pytest.approx(2 / 3)  # d: MC says 0, truth 2
    assert consensus_report(verdicts)[0].audit is None  # no truth: no audit


@pytest.mark.parametrize("statuses,expected", [(["correct", "incorrect"], 1), (["correct"] * 3, -1),
                                               ([None, "incorrect"], None), ([], -1)])
def test_formal_first_error(statuses: list[str | None], expected: int | None) -> None:
    assert formal_first_error(statuses) == expected


def test_config_rejects_unknown_policy() -> None:
    with pytest.raises(ValueError, match="policy='majority' is unknown"):
        ConsensusConfig(policy="majority")
