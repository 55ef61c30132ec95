"""RL runs that feed the PRM to TRL's GRPO: one arm per reward (outcome only, PRM min-form + outcome, PRM
summed + outcome, ``process``: DeepSeekMath's per-token process advantages, prm.rl.process_grpo, with PURE's and
Clip-Delta's credit as options, prm.rl.credit; and ``prime``: PRIME's online implicit PRM, prm.rl.prime), the same
policy, problems and budget for each, held-out accuracy and hacking signals before, along (prm.rl.curve) and
after, and runs marked ``hacked``. Never imports dagster; TRL is imported when a run starts.
"""

from prm.rl import trl_warnings  # noqa: F401  (before any TRL import: see the module)
from prm.rl.config import ARMS, RLRunConfig
from prm.rl.constants import OUTCOME, POLICY_SUBDIR, PRIME, PRIME_PLAIN, PRM_MIN, PROCESS, RESULT_FILE
from prm.rl.curve import HeldOutPoint, hacked_at
from prm.rl.data import eval_problems, split_pool, warehouse_problems
from prm.rl.flawed import flawed_ci, flawed_diff, flawed_share
from prm.rl.grpo import ArmResult, HeldOut, run_grpo
from prm.rl.report import Comparison, compare_arms, latest_hacked, latest_run_metrics, metric_rows, plot_arms
from prm.rl.verified_arms import first_error

__all__ = [
    "ARMS",
    "OUTCOME",
    "POLICY_SUBDIR",
    "PRIME",
    "PRIME_PLAIN",
    "PRM_MIN",
    "PROCESS",
    "RESULT_FILE",
    "ArmResult",
    "Comparison",
    "HeldOut",
    "HeldOutPoint",
    "RLRunConfig",
    "compare_arms",
    "eval_problems",
    "first_error",
    "flawed_ci",
    "flawed_diff",
    "flawed_share",
    "hacked_at",
    "latest_hacked",
    "latest_run_metrics",
    "metric_rows",
    "plot_arms",
    "run_grpo",
    "split_pool",
    "warehouse_problems",
]
