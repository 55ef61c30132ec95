"""The data flywheel: each round samples the latest policy, labels its samples with rollouts from that same
policy, retrains the PRM (warm-started, on a window of rounds) and resumes RL from the last policy with it.

A round is a warehouse partition (:func:`prm.flywheel.rounds.round_source`) and a pair of registry entries
(``warehouse.model_registry``): a PRM and a policy, each naming its parent and the table versions it was
built from. Never imports dagster: the assets in ``assets/flywheel.py`` and ``benchmarks/flywheel.py`` call
the same stages.
"""

from prm.flywheel.checks import hacking_in_band, policy_holds, prm_no_worse
from prm.flywheel.config import ON_REJECTED_PRM, FlywheelConfig
from prm.flywheel.data import label_round, rollouts_paid
from prm.flywheel.folders import round_dir
from prm.flywheel.lineage import policy_name, prm_name, round_policy, round_prm
from prm.flywheel.policy_round import rl_on
from prm.flywheel.report import plot_rounds, registered_rounds, rounds_markdown
from prm.flywheel.rounds import ROUND_DAY, round_of, round_source, window_rounds
from prm.flywheel.run import STALE, LazyBackend, RoundReport, policy_stage, prm_stage, run_round, samples_stage

__all__ = [
    "ON_REJECTED_PRM",
    "ROUND_DAY",
    "STALE",
    "FlywheelConfig",
    "LazyBackend",
    "RoundReport",
    "hacking_in_band",
    "label_round",
    "plot_rounds",
    "policy_holds",
    "policy_name",
    "policy_stage",
    "prm_name",
    "prm_no_worse",
    "prm_stage",
    "registered_rounds",
    "rl_on",
    "rollouts_paid",
    "round_dir",
    "round_of",
    "round_policy",
    "round_prm",
    "round_source",
    "rounds_markdown",
    "run_round",
    "samples_stage",
    "window_rounds",
]
