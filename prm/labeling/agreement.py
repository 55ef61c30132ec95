"""How often two labeling methods agree on a solution's first wrong step."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from prm.format import markdown_table
from prm.labeling.consensus import SolutionVerdicts
from warehouse.methods import TRUTH


@dataclass(frozen=True)
class Agreement:
    """Agreement of methods ``a`` and ``b`` over the solutions where both gave a first error."""

    a: str
    b: str
    n_both: int
    n_agree: int

    @property
    def rate(self) -> float | None:
        return self.n_agree / self.n_both if self.n_both else None


def pairwise_agreement(verdicts: Sequence[SolutionVerdicts], methods: Sequence[str],
                       truth: Mapping[str, int] | None = None) -> list[Agreement]:
    """Every pair of ``methods`` (plus ``truth`` when given): solutions both decided, and how many agree.

    >>> v = [SolutionVerdicts("s1", "p", 2, {"mc": 1, "judge": 1}), SolutionVerdicts("s2", "p", 2, {"mc": -1})]
    >>> [(g.a, g.b, g.n_both, g.n_agree) for g in pairwise_agreement(v, ["mc", "judge"], {"s1": 1, "s2": 0})]
    [('mc', 'judge', 1, 1), ('mc', 'truth', 2, 1), ('judge', 'truth', 1, 1)]
    """
    names = [*methods, TRUTH] if truth is not None else list(methods)

    def first_error(v: SolutionVerdicts, name: str) -> int | None:
        return (truth or {}).get(v.solution_id) if name == TRUTH else v.get(name)

    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            pairs = [(first_error(v, a), first_error(v, b)) for v in verdicts]
            both = [(x, y) for x, y in pairs if x is not None and y is not None]
            out.append(Agreement(a, b, len(both), sum(x == y for x, y in both)))
    return out


def agreement_markdown(agreements: Sequence[Agreement]) -> str:
    """A markdown table: pair, solutions both decided, agreement rate."""
    rows = [{"methods": f"{g.a} vs {g.b}", "both decided": g.n_both,
             "agree": None if g.rate is None else f"{g.rate:.0%}"} for g in agreements]
    return markdown_table(rows, ["methods", "both decided", "agree"])
