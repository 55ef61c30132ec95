"""The data flywheel: each round samples the latest policy, labels its samples with rollouts from that same
policy, retrains the PRM (warm-started, on a window of rounds) and resumes RL from the last policy with it.

A round is a warehouse partition (:func:`prm.flywheel.rounds.round_source`) and a pair of registry entries
(``warehouse.model_registry``): a PRM and a policy, each naming its parent and the table versions it was
built from. Never imports dagster: the assets in ``assets/flywheel.py`` and ``benchmarks/flywheel.py`` call
the same stages.
"""

from prm.flywheel.config import FlywheelConfig
from prm.flywheel.rounds import ROUND_DAY, round_of, round_source, window_rounds

__all__ = ["ROUND_DAY", "FlywheelConfig", "round_of", "round_source", "window_rounds"]
