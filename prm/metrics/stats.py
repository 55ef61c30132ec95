"""Step-label and PRM metrics shared by the label audit and PRM evaluation.

* Step F1 takes the *wrong step* as the positive class (what a PRM must catch).
* ProcessBench F1 (Zheng et al. 2024) = harmonic mean of the exact first-error match on wrong solutions
  (truth >= 0) and the acceptance of correct ones (truth = -1). A missing prediction is a miss.
* :func:`bootstrap_mean_ci` / :func:`paired_bootstrap_diff_ci`: 95% percentile-bootstrap intervals of a mean
  over problems (one value per problem, e.g. its share of right samples) and of a paired mean difference on
  the same problems (an after-minus-before gain).
* :func:`f1_difference_ci`: paired bootstrap of a ProcessBench F1 difference, resampling within the wrong
  and the correct group so both stay present.
* :func:`problem_bootstrap_ci`: the same over problems for any statistic of whole problems (ProcessBench F1,
  a pooled share, a paired difference of two scorers on the same problems).
* :func:`roc_auc`: the probability that a random positive outranks a random negative, ties counting half
  (the Mann-Whitney U statistic over n_pos * n_neg).
* :func:`gap_closed`: the share of the majority-vote-to-oracle gap a best-of-N picker closes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import numpy as np


def ratio(num: float, den: float) -> float | None:
    """``num / den``, None when ``den`` is 0.

    >>> ratio(1, 4), ratio(1, 0)
    (0.25, None)
    """
    return num / den if den else None


def harmonic_mean(a: float | None, b: float | None) -> float | None:
    """F1-style harmonic mean; None when either is undefined, 0 when both are 0.

    >>> harmonic_mean(1.0, 0.5), harmonic_mean(0.0, 0.0), harmonic_mean(None, 1.0)
    (0.6666666666666666, 0.0, None)
    """
    if a is None or b is None:
        return None
    return 2 * a * b / (a + b) if a + b else 0.0


def step_f1(tp: int, fp: int, fn: int) -> float | None:
    """F1 of the wrong-step class from counts; None when there is nothing to score.

    >>> step_f1(tp=2, fp=0, fn=2), step_f1(0, 0, 0)
    (0.6666666666666666, None)
    """
    if not tp + fp + fn:
        return None
    return harmonic_mean(ratio(tp, tp + fp) or 0.0, ratio(tp, tp + fn) or 0.0)


def first_error_accuracies(preds: Mapping[str, int | None],
                           truth: Mapping[str, int]) -> tuple[float | None, float | None]:
    """(first-error exact match on wrong solutions, acceptance of correct ones) over the ``truth`` ids.

    >>> first_error_accuracies({"w": 2, "c": 0}, {"w": 2, "c": -1})
    (1.0, 0.0)
    """
    wrong = [sid for sid, fe in truth.items() if fe >= 0]
    right = [sid for sid, fe in truth.items() if fe < 0]
    return (ratio(sum(preds.get(s) == truth[s] for s in wrong), len(wrong)),
            ratio(sum(preds.get(s) == -1 for s in right), len(right)))


def processbench_f1(preds: Mapping[str, int | None], truth: Mapping[str, int]) -> float | None:
    """Harmonic mean of :func:`first_error_accuracies`; None when one kind of solution is missing.

    >>> processbench_f1({"w": 1, "c": -1}, {"w": 1, "c": -1}), processbench_f1({"w": 0}, {"w": 1, "c": -1})
    (1.0, 0.0)
    """
    return harmonic_mean(*first_error_accuracies(preds, truth))


def bootstrap_mean_ci(values: Sequence[float], *, n_boot: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95% percentile-bootstrap interval of the mean of ``values``, one value per problem: each of ``n_boot``
    replicates resamples the problems with replacement (the samples of a problem stay together).

    >>> bootstrap_mean_ci([0.25] * 8)
    (0.25, 0.25)
    >>> low, high = bootstrap_mean_ci([1.0, 0.0] * 20); low < 0.5 < high
    True
    """
    if not values:
        raise ValueError("bootstrap_mean_ci got no values: pass one value per problem (at least one)")
    rng = random.Random(seed)
    k = len(values)
    means = sorted(sum(values[rng.randrange(k)] for _ in range(k)) / k for _ in range(n_boot))
    return means[int(0.025 * n_boot)], means[min(n_boot - 1, int(0.975 * n_boot))]


T = TypeVar("T")


def problem_bootstrap_ci(problems: Sequence[T], statistic: Callable[[list[T]], float | None], *,
                         n_boot: int = 1000, seed: int = 0) -> tuple[float, float] | None:
    """95% percentile-bootstrap interval of ``statistic`` over problems: each replicate resamples the problems
    (whatever one problem holds: its solutions, its sibling pairs, two scorers' verdicts on it) with replacement
    and computes the statistic of the resample. Replicates where it is undefined (None) are skipped; None when
    every one is.

    >>> problem_bootstrap_ci([[1.0], [1.0, 1.0]], lambda ps: sum(map(sum, ps)) / sum(map(len, ps)))
    (1.0, 1.0)
    >>> low, high = problem_bootstrap_ci([[1.0], [0.0]] * 10, lambda ps: sum(p[0] for p in ps) / len(ps))
    >>> low < 0.5 < high
    True
    """
    if not problems:
        return None
    rng = random.Random(seed)
    k = len(problems)
    stats = []
    for _ in range(n_boot):
        value = statistic([problems[rng.randrange(k)] for _ in range(k)])
        if value is not None:
            stats.append(value)
    if not stats:
        return None
    stats.sort()
    return stats[int(0.025 * len(stats))], stats[min(len(stats) - 1, int(0.975 * len(stats)))]


def paired_bootstrap_diff_ci(a: Sequence[float], b: Sequence[float], *, n_boot: int = 2000,
                             seed: int = 0) -> tuple[float, float]:
    """95% paired-bootstrap interval of ``mean(a) - mean(b)`` where ``a[i]`` and ``b[i]`` are the same problem
    (e.g. its accuracy after and before training): problems are resampled, each keeping both of its values.

    >>> paired_bootstrap_diff_ci([1.0, 0.0, 0.5], [1.0, 0.0, 0.5])
    (0.0, 0.0)
    >>> paired_bootstrap_diff_ci([1.0, 0.5], [0.5, 0.0])
    (0.5, 0.5)
    """
    if len(a) != len(b):
        raise ValueError(f"paired_bootstrap_diff_ci got {len(a)} and {len(b)} values: a paired interval needs one "
                         "value per problem on both sides, in the same problem order")
    return bootstrap_mean_ci([x - y for x, y in zip(a, b, strict=True)], n_boot=n_boot, seed=seed)


def f1_difference_ci(preds_a: Mapping[str, int | None], preds_b: Mapping[str, int | None],
                     truth: Mapping[str, int], *, n_boot: int = 2000, seed: int = 0) -> dict[str, float | None]:
    """ProcessBench F1 of ``a`` minus ``b`` with a paired bootstrap 95% interval.

    >>> truth = {"w1": 1, "w2": 2, "c": -1}
    >>> f1_difference_ci({"w1": 1, "w2": 2, "c": -1}, {"w1": 1, "w2": 0, "c": -1}, truth, n_boot=200)["delta"]
    0.333...
    """
    delta = _diff(processbench_f1(preds_a, truth), processbench_f1(preds_b, truth))
    wrong = [s for s, fe in truth.items() if fe >= 0]
    right = [s for s, fe in truth.items() if fe < 0]
    hits = [([p.get(s) == truth[s] for s in wrong], [p.get(s) == -1 for s in right]) for p in (preds_a, preds_b)]
    rng = random.Random(seed)
    deltas = []
    for _ in range(n_boot):
        iw = [rng.randrange(len(wrong)) for _ in wrong]
        ir = [rng.randrange(len(right)) for _ in right]
        f1s = [harmonic_mean(ratio(sum(w[k] for k in iw), len(iw)), ratio(sum(r[k] for k in ir), len(ir)))
               for w, r in hits]
        if (d := _diff(*f1s)) is not None:
            deltas.append(d)
    deltas.sort()
    lo = deltas[int(0.025 * len(deltas))] if deltas else None
    hi = deltas[min(len(deltas) - 1, int(0.975 * len(deltas)))] if deltas else None
    return {"delta": delta, "ci_low": lo, "ci_high": hi}


def roc_auc(positive: Sequence[bool], scores: Sequence[float]) -> float | None:
    """ROC-AUC of ``scores`` for the ``positive`` class (higher score = more positive); None without both classes.

    Tied scores count half a correctly ordered pair, so a constant scorer gets exactly 0.5.

    >>> roc_auc([True, True, False, False], [0.8, 0.4, 0.6, 0.2]), roc_auc([True, False], [0.5, 0.5])
    (0.75, 0.5)
    >>> roc_auc([True, True], [0.1, 0.9]) is None
    True
    """
    pos = np.asarray(positive, dtype=bool)
    values = np.asarray(scores, dtype=float)
    if pos.shape != values.shape:
        raise ValueError(f"roc_auc got {pos.size} labels and {values.size} scores; pass one score per label")
    n_pos = int(pos.sum())
    n_neg = pos.size - n_pos
    if not n_pos or not n_neg:
        return None
    # 1-based ranks, each tie group sharing the mean of the ranks it spans.
    _, group, counts = np.unique(values, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    ranks = ((ends - counts + 1 + ends) / 2)[group]
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def gap_closed(picked: float | None, majority: float | None, oracle: float | None) -> float | None:
    """``(picked - majority) / (oracle - majority)``: 1 = as good as the oracle, 0 = no better than majority
    vote, negative = worse. None when the oracle does not beat majority vote (there is no gap) or a value is None.

    >>> gap_closed(0.75, 0.5, 1.0), gap_closed(0.25, 0.5, 0.5)
    (0.5, None)
    """
    if picked is None or majority is None or oracle is None or oracle == majority:
        return None
    return (picked - majority) / (oracle - majority)


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b
