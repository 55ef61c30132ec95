"""How many rollouts a rollout labeler spends: adaptive counts per step prefix and a budget per partition.

* Adaptive rollouts (``adaptive``, ``adaptive_min``, ``adaptive_max`` on :class:`prm.labeling.MCConfig` and
  :class:`prm.labeling.OmegaPRMConfig`): a prefix first gets ``adaptive_min`` rollouts; when they agree (all reach
  gold or none does) the estimate is settled and stops there, when they split it is topped up to ``adaptive_max``.
  The hard label keeps its rule (MC > 0); a split prefix is already MC > 0, so the extra rollouts sharpen its soft
  label, while a settled one costs ``adaptive_min`` instead of N.
* :class:`RolloutBudget`: rollouts a labeler may charge (cost_rollouts: cached ones count, as in ``step_labels``)
  over every ``label`` call of one labeler object, which :func:`prm.labeling.label_partition` builds once per
  partition. Work is reserved before it is sampled, so the budget is never overrun; once a reservation fails the
  budget is ``stopped`` for good and nothing more is started.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from prm.labeling.types import RolloutOutcome
from prm.settings import check_rollout_budget, check_rollouts

# A first look of 4 rollouts: the chance that 4 rollouts of a prefix with MC = 0.5 agree is 1/8.
ADAPTIVE_MIN = 4
# The cap of a split prefix: twice Math-Shepherd's N, so the soft labels the split steps get are finer than fixed N's.
ADAPTIVE_MAX = 16


def check_adaptive(adaptive_min: int, adaptive_max: int) -> None:
    """Raise a ValueError unless 1 <= ``adaptive_min`` <= ``adaptive_max`` <= MAX_ROLLOUTS.

    >>> check_adaptive(8, 4)
    Traceback (most recent call last):
    ...
    ValueError: adaptive_min=8 is above adaptive_max=4: a split prefix is topped up to adaptive_max
    """
    check_rollouts("adaptive_min", adaptive_min)
    check_rollouts("adaptive_max", adaptive_max)
    if adaptive_min > adaptive_max:
        raise ValueError(f"adaptive_min={adaptive_min} is above adaptive_max={adaptive_max}: a split prefix is topped "
                         "up to adaptive_max")


def check_budget(name: str, value: int | None) -> None:
    """Raise a ValueError unless ``value`` is None (no budget) or a count in prm.settings' rollout-budget bound."""
    if value is not None:
        check_rollout_budget(name, value)


def settled(outcomes: Sequence[RolloutOutcome]) -> bool:
    """Whether the outcomes agree: all reach gold, or none does (an ungradable one did not reach it).

    >>> settled([RolloutOutcome("", True, 1), RolloutOutcome("", None, 1)])
    False
    """
    correct = sum(o.is_correct is True for o in outcomes)
    return correct in (0, len(outcomes))


@dataclass
class RolloutBudget:
    """Rollouts one labeler may still charge; ``limit`` None = unbounded (never stops).

    >>> b = RolloutBudget(10)
    >>> b.take(8), b.take(4), b.stopped, b.take(1)  # the second does not fit: stopped, and stays stopped
    (True, False, True, False)
    >>> b.refund(3); b.spent
    5
    """

    limit: int | None = None
    spent: int = 0
    stopped: bool = False  # a reservation failed: some work was left undone

    def __post_init__(self) -> None:
        check_budget("max_rollouts_per_partition", self.limit)

    def fits(self, n: int) -> bool:
        """Whether ``n`` more rollouts fit (never after a stop)."""
        return not self.stopped and (self.limit is None or self.spent + n <= self.limit)

    def take(self, n: int) -> bool:
        """Reserve ``n`` rollouts; False (and ``stopped``) when they do not fit or the budget stopped before."""
        if not self.fits(n):
            self.stopped = self.limit is not None
            return False
        self.spent += n
        return True

    def refund(self, n: int) -> None:
        """Give back reserved rollouts that were not used."""
        self.spent -= n

    def charge(self, n: int) -> None:
        """Count rollouts already spent elsewhere (a resumed partition's stored labels)."""
        self.spent += n
