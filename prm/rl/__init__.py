"""RL runs that feed the PRM to TRL's GRPO: one arm per reward (outcome only, PRM min-form + outcome, PRM
summed + outcome, and ``process``: DeepSeekMath's per-token process advantages, prm.rl.process_grpo), the same
policy, problems and budget for each, held-out accuracy and hacking signals before and after. Never imports
dagster; TRL is imported when a run starts.
"""

from prm.rl.config import ARMS, RLRunConfig
from prm.rl.grpo import ArmResult, HeldOut, run_grpo
from prm.rl.report import Comparison, compare_arms, metric_rows, plot_arms

__all__ = [
    "ARMS",
    "ArmResult",
    "Comparison",
    "HeldOut",
    "RLRunConfig",
    "compare_arms",
    "metric_rows",
    "plot_arms",
    "run_grpo",
]
