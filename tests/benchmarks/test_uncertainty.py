"""benchmarks/uncertainty.py's scoring of an estimate: mistakes caught among the most unsure, the mistake rate of
what is left, ActPRM's trust rule, and differences paired per solution (hand-built beliefs)."""

from __future__ import annotations

import doctest

import benchmarks.uncertainty as unc
from benchmarks.uncertainty import Judged, caught_at, left_error, metrics, paired, trust_rule
from prm.labeling.uncertainty import StepBelief


def _j(cluster: str, sid: str, p: float, mistake: bool, spread: float = 0.0) -> Judged:
    return Judged(cluster, sid, StepBelief((p,), (spread,)), mistake)


# Two estimates of the same four solutions: "good" ranks its mistakes as the most unsure, "bad" ranks them last.
GOOD = [_j("a", "1", 0.5, True), _j("a", "2", 0.99, False), _j("b", "3", 0.55, True), _j("b", "4", 0.97, False)]
BAD = [_j("a", "1", 0.99, True), _j("a", "2", 0.5, False), _j("b", "3", 0.97, True), _j("b", "4", 0.55, False)]


def test_the_doctests_hold() -> None:
    assert doctest.testmod(unc).failed == 0


def test_an_estimate_that_ranks_its_mistakes_first_catches_them_and_leaves_none() -> None:
    assert caught_at(GOOD, 0.5) == 1.0 and left_error(GOOD, 0.5) == 0.0
    assert caught_at(BAD, 0.5) == 0.0 and left_error(BAD, 0.5) == 1.0
    assert metrics(GOOD)["auroc"]["value"] == 1.0 and metrics(BAD)["auroc"]["value"] == 0.0


def test_the_trust_rule_reads_the_spread() -> None:
    sure = [_j("a", "1", 0.95, False), _j("b", "2", 0.95, True, spread=0.2)]
    assert trust_rule(sure) == {"trusted_share": 0.5, "mistakes_among_trusted": 0.0, "mistakes_sent": 1.0}


def test_a_paired_difference_keeps_each_solutions_two_estimates_together() -> None:
    out = paired(GOOD, BAD, lambda js: caught_at(js, 0.5))
    assert out["delta"] == 1.0 and out["ci"] == (1.0, 1.0)
