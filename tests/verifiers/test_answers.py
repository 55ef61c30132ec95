"""Answer grading: table of known pairs, then every real gold answer against its re-rendering."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable

import pytest

from verifiers import grade_answer, grade_answers, grade_verdicts


@pytest.mark.parametrize(
    "prediction,gold,expected",
    [
        ("1,234", "1234", True),
        ("18.0", "18", True),
        ("$18", "18", True),
        # a unit word after a number grades the same whichever unit it is (Math-Verify alone: meters True,
        # dollars False)
        ("18 dollars", "18", True),
        ("540 meters", "540", True),
        ("12 square meters", "12", True),
        ("18 dollars", "19", False),
        ("2 pi", "2", False),  # not units: they change the value
        ("18 thousand", "18", False),
        ("-5", "-5.00", True),
        ("17", "18", False),
        ("0.3333", "1/3", False),
        ("14/3", r"\frac{14}{3}", True),
        (r"\boxed{\frac{14}{3}}", r"\frac{14}{3}", True),
        ("(3, pi/2)", r"\left( 3, \frac{\pi}{2} \right)", True),
        ("(3, pi/3)", r"\left( 3, \frac{\pi}{2} \right)", False),
        ("sqrt(51)", r"\sqrt{51}", True),
        (r"\{1, 2\}", r"\{2, 1\}", True),
        ("10", r"10\%", True),
        (r"\$36", "36", True),
        ("90", r"90^\circ", True),
        ("6-5i", "6 - 5i", True),
        ("6+5i", "6 - 5i", False),
        (None, "3", None),
        ("", "3", None),
    ],
)
def test_grade_table(prediction: str | None, gold: str, expected: bool | None) -> None:
    assert grade_answer(prediction, gold) is expected


@pytest.mark.parametrize(
    "pair,reason",
    [
        (("18", 18), "gold answer is int, not text"),
        (("18", None), "gold answer is NoneType, not text"),
        ((r"\frac{1}{2}", ["1/2"]), "gold answer is list, not text"),
        (("18", "1" * 3_000), "longer than"),
        ((None, "3"), "no prediction"),
        (("3", "3\x00"), "NUL"),
        ("18", "not a (prediction, gold) pair"),
        (None, "not a (prediction, gold) pair"),
    ],
)
def test_bad_pair_is_unverifiable_alone(pair: object, reason: str) -> None:
    """A pair that cannot be graded gets its own verdict with the reason; the batch around it is kept."""
    batch = [("1,234", "1234"), pair, (r"\frac{14}{3}", "14/3"), ("17", "18")]
    verdicts = grade_verdicts(batch)  # type: ignore[arg-type]
    assert verdicts[1].status == "unverifiable" and reason in verdicts[1].detail
    assert [v.status for v in verdicts[::2]] == ["correct", "correct"] and verdicts[3].status == "incorrect"
    assert grade_answers(batch) == [True, None, True, False]  # type: ignore[arg-type]


def test_grading_works_off_the_main_thread() -> None:
    out: list[bool | None] = []
    thread = threading.Thread(target=lambda: out.append(grade_answer("14/3", r"\frac{14}{3}")))
    thread.start()
    thread.join(timeout=60)
    assert out == [True]


def test_hostile_prediction_is_bounded() -> None:
    rows = [("9**9**9**9", "3"), (r"2^{2^{2^{2^{2^{2}}}}}", "3"), ("7", "7")]
    # Neither tower grades as equal to 3; the tower of 2s is cut at the timeout and says so; the honest row grades.
    verdicts = grade_verdicts(rows, timeout_s=2.0)
    assert [v.status for v in verdicts] == ["incorrect", "unverifiable", "correct"]
    assert verdicts[1].detail == "timed out after 2 s"
    assert grade_answers(rows, timeout_s=2.0) == [False, None, True]


def _rerender(gold: str) -> str:
    """Plain-text spelling of a LaTeX answer, as a model might write it (not a general converter)."""
    s = re.sub(r"\\left|\\right|\\!|\\,", "", gold)
    s = re.sub(r"(\d),\s*(?=\d{3}\b)", r"\1,", s)
    s = re.sub(r"(\d)\s*\\[dt]?frac\{(\d+)\}\{(\d+)\}", r"\1+\2/\3", s)  # mixed number 1\frac{4}{5}
    for _ in range(4):
        s = re.sub(r"\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}", r"(\1)/(\2)", s)
        s = re.sub(r"\\sqrt\{([^{}]*)\}", r"sqrt(\1)", s)
    s = s.replace(r"\pi", "pi").replace(r"\cdot", "*").replace(r"\times", "*")
    s = re.sub(r"\^\{([^{}]*)\}", r"^(\1)", s)
    return re.sub(r"\s+", " ", s).strip()


def test_math500_golds_equal_their_rerendering(read_jsonl: Callable[[str], list[dict]]) -> None:
    golds = [row["answer"] for row in read_jsonl("math500/test.jsonl")]
    rerendered = [(_rerender(g), g) for g in golds]
    boxed = [(rf"\boxed{{{g}}}", g) for g in golds]
    grades = grade_answers(rerendered + boxed, timeout_s=10.0)
    plain_ok, boxed_ok = grades[: len(golds)], grades[len(golds) :]
    changed = sum(p != g for p, g in rerendered)
    # Measured: 500/500 boxed, 496/500 re-rendered (95 changed by re-rendering); the misses are
    # answers like "\text{Navin}" and "1 \pm sqrt(19)" whose plain spelling is not a math expression.
    assert changed >= 90
    assert all(g is True for g in boxed_ok)  # every gold equals itself boxed
    assert sum(g is True for g in plain_ok) >= 490
    wrong = [(f"{g} + 1", g) for g in golds[:80] if not g.startswith(("(", "\\left"))]
    assert not any(grade_answers(wrong, timeout_s=10.0))


def test_gsm8k_golds_equal_their_rerendering(read_jsonl: Callable[[str], list[dict]]) -> None:
    golds = [row["answer"].rsplit("####", 1)[1].strip() for row in read_jsonl("gsm8k/test.jsonl")]
    pairs = [(f"{int(g.replace(',', '')):,}", g) for g in golds] + [(f"{g}.0", g) for g in golds]
    pairs += [(rf"\boxed{{{g}}}", g) for g in golds[:200]]
    assert all(grade_answers(pairs, timeout_s=10.0))
    assert not any(grade_answers([(str(int(g.replace(",", "")) + 1), g) for g in golds]))
