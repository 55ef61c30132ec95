"""Best-of-N with a PRM (pure: no torch, no matplotlib): step-score aggregations and PRM-weighted votes, the
references that need no PRM (majority vote, a random pick, the oracle), the aggregation chosen on validation, two
baseline scorers, and accuracies with 95% intervals over problems (:mod:`~prm.best_of_n.outcome`: what a gold answer
alone supports)."""

from prm.best_of_n.intervals import bon_correct, bon_intervals, paired_bon_difference, pooled_bon
from prm.best_of_n.outcome import REFERENCES, accuracy, answer_key, choose_vote
from prm.best_of_n.picks import (
    AGGREGATIONS,
    CONSTANT,
    DEFAULT_BON_N,
    LENGTH,
    MAJORITY,
    ORACLE,
    RANDOM,
    SCORE_AGGREGATIONS,
    VOTE_PREFIX,
    BestOfN,
    aggregate,
    bon_accuracies,
    bon_curve,
    constant_baseline,
    evaluate_best_of_n,
    length_baseline,
    majority_pick,
    weighted_vote_pick,
)

__all__ = [
    "AGGREGATIONS",
    "CONSTANT",
    "DEFAULT_BON_N",
    "LENGTH",
    "MAJORITY",
    "ORACLE",
    "RANDOM",
    "REFERENCES",
    "SCORE_AGGREGATIONS",
    "VOTE_PREFIX",
    "BestOfN",
    "accuracy",
    "aggregate",
    "answer_key",
    "bon_accuracies",
    "bon_correct",
    "bon_curve",
    "bon_intervals",
    "choose_vote",
    "constant_baseline",
    "evaluate_best_of_n",
    "length_baseline",
    "majority_pick",
    "paired_bon_difference",
    "pooled_bon",
    "weighted_vote_pick",
]
