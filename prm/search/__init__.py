"""PRM-guided test-time search: step-level beam search, DVTS, best-of-N, the
PRM-weighted vote and majority vote.

Expansions go through a generation backend (:class:`BackendExpander`), scores through the batched PRM scorer
(``prm.scoring.load_prm``), steps through ``prm.format``. Never imports dagster.
"""

from prm.search.compare import compare_at_budgets
from prm.search.config import SearchConfig
from prm.search.constants import MAX_M
from prm.search.cost import beam_search_cost
from prm.search.expand import BackendExpander, Expander, Expansion
from prm.search.methods import SEARCH_METHODS, run_search
from prm.search.plots import plot_accuracy_vs_budget
from prm.search.report import accuracy_ci, grade
from prm.search.run import check_problem_count, heldout_problems, warehouse_problems
from prm.search.sampling import ScoredPool, best_of_n, majority_vote, sample_pool, score_pool, weighted_vote
from prm.search.scoring import prefix_scorer
from prm.search.tree import beam_search, dvts
from prm.search.types import Beam, SearchResult

__all__ = [
    "MAX_M",
    "SEARCH_METHODS",
    "BackendExpander",
    "Beam",
    "Expander",
    "Expansion",
    "ScoredPool",
    "SearchConfig",
    "SearchResult",
    "accuracy_ci",
    "beam_search",
    "beam_search_cost",
    "best_of_n",
    "check_problem_count",
    "compare_at_budgets",
    "dvts",
    "grade",
    "heldout_problems",
    "majority_vote",
    "plot_accuracy_vs_budget",
    "prefix_scorer",
    "run_search",
    "sample_pool",
    "score_pool",
    "warehouse_problems",
    "weighted_vote",
]
