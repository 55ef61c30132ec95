"""What makes a PRM training set: the label method, label kind, balance and the split by problem."""

from __future__ import annotations

from dataclasses import dataclass

from prm.settings import check_count, check_range, check_seed
from prm.training.rows import LABEL_KINDS
from warehouse.methods import LABEL_SOURCES

BALANCES = ("none", "downsample", "weight")
# Gold steps of the longest solution a split by length may cut at: no task this pipeline reads comes near (the
# arithmetic task tops out at prm.tasks' 32 operations, GSM8K and MATH solutions at a few dozen steps).
MAX_GOLD_STEPS = 1_000


@dataclass(frozen=True)
class TrainingSetConfig:
    """Which labels make the training set and how it is split.

    >>> TrainingSetConfig(method="mc", val_share=0.6, test_share=0.6)
    Traceback (most recent call last):
    ...
    ValueError: val_share + test_share = 1.2 leaves no problems to train on; keep their sum below 1
    """

    method: str  # a method-table name (warehouse/methods/table.py) or "truth" (steps.is_correct_truth)
    label_kind: str = "hard"  # "hard": hard_label (bool); "soft": soft_label (P(good), e.g. an MC estimate)
    consensus_only: bool = False  # keep only solutions that also carry `consensus` labels (Zhang et al. 2025)
    balance: str = "none"  # "none" | "downsample" (train solutions) | "weight" (loss weights); see module doc
    val_share: float = 0.1  # share of problems for validation: checkpoint metrics, thresholds
    test_share: float = 0.2  # share of problems held out (with train_max_steps: of the short ones, in distribution)
    split_seed: int = 0  # seeds the problem hash and the downsampling
    train_max_steps: int | None = None  # easy-to-hard: train/val/test on <= n gold steps, and test on longer ones
    # Only problems of this warehouse source (e.g. "arith"), or of these sources (a flywheel window of rounds);
    # None = every source.
    source: str | tuple[str, ...] | None = None
    # Leave out labels with status "pseudo" (a PRM's own labels that active labeling wrote for solutions it was sure
    # of): only labels a method paid for; a solution with pseudo labels then counts as unlabeled.
    exclude_pseudo: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.source, list | tuple):  # lists from JSON (TrainingSet.load) or YAML
            if not self.source:
                raise ValueError("source=() names no source; pass None for every source")
            object.__setattr__(self, "source", tuple(self.source))
        known = LABEL_SOURCES
        if self.method not in known:
            raise ValueError(f"method={self.method!r} is not a label method; use one of {list(known)} "
                             "(the method table in warehouse/methods/table.py, or 'truth' for steps.is_correct_truth)")
        if self.label_kind not in LABEL_KINDS:
            raise ValueError(f"label_kind={self.label_kind!r} must be one of {LABEL_KINDS}")
        if self.balance not in BALANCES:
            raise ValueError(f"balance={self.balance!r} must be one of {BALANCES}")
        for name in ("val_share", "test_share"):
            check_range(name, getattr(self, name), low=0.0, high=1.0, high_open=True, why="a share of the problems")
        check_seed("split_seed", self.split_seed)
        if self.val_share + self.test_share >= 1:
            raise ValueError(f"val_share + test_share = {self.val_share + self.test_share:g} leaves no problems "
                             "to train on; keep their sum below 1")
        if self.train_max_steps is not None:
            check_count("train_max_steps", self.train_max_steps, high=MAX_GOLD_STEPS,
                        why="gold steps of a solution; None splits by share")
