"""PRM-guided test-time search: step-level beam search, DVTS, best-of-N and majority vote.

Expansions go through a generation backend (:class:`BackendExpander`), scores through the batched PRM scorer
(``prm.scoring.load_prm``), steps through ``prm.format``. Never imports dagster.
"""

from prm.search.config import SearchConfig
from prm.search.expand import BackendExpander, Expander, Expansion
from prm.search.methods import SEARCH_METHODS, run_search
from prm.search.report import accuracy_ci, grade
from prm.search.sampling import best_of_n, majority_vote, sample_pool
from prm.search.tree import beam_search, dvts
from prm.search.types import Beam, SearchResult

__all__ = [
    "SEARCH_METHODS",
    "BackendExpander",
    "Beam",
    "Expander",
    "Expansion",
    "SearchConfig",
    "SearchResult",
    "accuracy_ci",
    "beam_search",
    "best_of_n",
    "dvts",
    "grade",
    "majority_vote",
    "run_search",
    "sample_pool",
]
