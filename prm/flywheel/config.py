"""What every round of a flywheel shares: its problems, samples, labels, PRM run, RL run and check bands."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any

from prm.flywheel.rounds import round_source, window_rounds
from prm.generation import SOLUTION_MAX_TOKENS
from prm.labeling import ActiveConfig, MCConfig, OmegaPRMConfig
from prm.models import ARITH_POLICY_NAME
from prm.rl import RLRunConfig
from prm.settings import check_range, check_temperature
from prm.tasks import ArithmeticSourceConfig
from prm.training import PRMTrainConfig, TrainingSetConfig

# Label methods a round can pay for with the round's own policy (rollout-based, so relative to that policy).
# ``active`` spends OmegaPRM's rollouts only on the solutions the previous round's PRM is unsure of (every one in
# round 0, which has no PRM yet).
ROUND_LABELERS = ("omegaprm", "mc", "mc_early_stop", "active")
# What a round does when the regression check rejects its retrained PRM: stop (the round's RL has no PRM), or keep
# the last accepted PRM (RL rewards with it and the next round warm-starts from it; the rejection stays registered).
ON_REJECTED_PRM = ("stop", "keep_last")


@dataclass(frozen=True)
class FlywheelConfig:
    """One flywheel's settings; every round reads the same ones.

    >>> FlywheelConfig(label_method="judge")
    Traceback (most recent call last):
    ...
    ValueError: label_method='judge' must be one of ('omegaprm', 'mc', 'mc_early_stop', 'active'): a round labels ...
    """

    policy: str = ARITH_POLICY_NAME  # round 0's policy (prm.models.resolve_model); later rounds start from RL's
    # --- each round's fresh problems: the generator, seeded by (seed, round) ---
    n_ops: tuple[int, ...] = (6, 7, 8, 9, 10)  # the RL run's anchors and targets (RLRunConfig's defaults)
    per_level: int = 20  # problems per difficulty and round: 400 samples, ~200 train solutions a round
    # --- the round's policy samples and their labels ---
    n_samples: int = 4  # solutions per problem
    temperature: float = 1.0
    max_tokens: int = SOLUTION_MAX_TOKENS
    label_method: str = "omegaprm"  # one of ROUND_LABELERS; rollouts come from the round's policy
    label_rollouts: int = 8  # OmegaPRM's k, or MC's N
    # --- the PRM ---
    window: int | None = None  # rounds of labels the PRM trains on: None = every round so far
    warm_start: bool = True  # start from the previous round's PRM (round 0: the policy's backbone)
    prm_steps: int = 300  # optimizer steps per round (as benchmarks/rl.py's truth PRM)
    val_share: float = 0.2  # problems per round for the threshold
    test_share: float = 0.3  # held-out problems per round: where fresh and stale PRMs are compared
    # --- RL, resumed each round from the last policy ---
    arm: str = "prm_min"  # prm.rl.ARMS; the PRM arm that matched outcome-only RL in benchmarks/rl.py
    # The first_error / flawed_penalty arms' wrong-step threshold (RLRunConfig.error_threshold; choose it on
    # validation with benchmarks/rl_threshold.py).
    error_threshold: float = RLRunConfig.error_threshold
    rl_steps: int = 30  # GRPO steps per round; a single run of rounds * rl_steps is the baseline
    rl_batch_size: int = 32
    num_generations: int = 8
    eval_problems: int = 16  # held-out per difficulty, the same every round (prm.rl.data.eval_problems)
    eval_samples: int = 4
    # --- check bands ---
    prm_tolerance: float = 0.05  # the new PRM may trail the previous one by this much F1 on the new samples
    on_rejected_prm: str = "stop"  # one of ON_REJECTED_PRM
    collapse_tolerance: float = 0.10  # the policy may lose this much held-out accuracy in a round
    hacking_band: float = 0.5  # steps and length per completion stay within +-50% of round 0's starting policy
    seed: int = 0

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.type in (float, "float"):
                object.__setattr__(self, f.name, float(getattr(self, f.name)))
        object.__setattr__(self, "n_ops", tuple(self.n_ops))
        if self.label_method not in ROUND_LABELERS:
            raise ValueError(f"label_method={self.label_method!r} must be one of {ROUND_LABELERS}: a round labels "
                             "with rollouts from its own policy")
        if self.on_rejected_prm not in ON_REJECTED_PRM:
            raise ValueError(f"on_rejected_prm={self.on_rejected_prm!r} must be one of {ON_REJECTED_PRM}")
        for name in ("per_level", "n_samples", "label_rollouts", "prm_steps", "rl_steps", "eval_problems",
                     "eval_samples"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)} must be >= 1")
        # The check bands are shares of F1, accuracy and length: a NaN would pass or fail every round silently.
        check_temperature("temperature", self.temperature)
        for name in ("prm_tolerance", "collapse_tolerance"):  # negative: a gain of that much is required
            check_range(name, getattr(self, name), low=-1.0, high=1.0,
                        why="a drop in F1 or accuracy allowed, a share; negative requires a gain")
        check_range("hacking_band", self.hacking_band, low=0.0, low_open=True, why="a share of round 0's values")
        window_rounds(0, self.window)  # validates the window
        self.rl_config()  # validates the RL settings (arm, batch, difficulties)
        missing = sorted(set(self.rl_config().train_ops) - set(self.n_ops))
        if missing:
            raise ValueError(f"n_ops={self.n_ops} lacks the RL run's training difficulties {missing}; add them")

    def problems(self) -> ArithmeticSourceConfig:
        """The generator settings of a round's problems (word problems, as the policy was trained on)."""
        return ArithmeticSourceConfig(n_ops=self.n_ops, per_level=self.per_level)

    def problem_seed(self, k: int) -> int:
        """Round ``k``'s problem seed: fresh problems every round, the same for a re-run of the round."""
        return 10_000 * (self.seed + 1) + k

    def labeler(self, prm: str | None = None) -> Any:
        """The labeling config of ``label_method`` (OmegaPRM unscreened: every wrong solution is labeled); ``active``
        scores with ``prm`` (the round's PRM; None: none yet, so every solution goes to OmegaPRM)."""
        if self.label_method == "active":
            return ActiveConfig(prm=prm, rollouts=self.label_rollouts)
        if self.label_method == "omegaprm":
            return OmegaPRMConfig(k=self.label_rollouts, screen=False)
        return MCConfig(n_rollouts=self.label_rollouts, early_stop=self.label_method == "mc_early_stop")

    def training_set(self, k: int) -> TrainingSetConfig:
        """Round ``k``'s PRM training set: the window's rounds, split by problem (one split map for all)."""
        sources = tuple(round_source(r) for r in window_rounds(k, self.window))
        return TrainingSetConfig(method=self.label_method, val_share=self.val_share, test_share=self.test_share,
                                 split_seed=self.seed, source=sources)

    def prm_train(self, parent: str | None) -> PRMTrainConfig:
        """The PRM run; ``parent`` (the previous round's PRM folder) is the starting point when warm-starting."""
        base = parent if parent is not None and self.warm_start else PRMTrainConfig().base_model
        return PRMTrainConfig(base_model=base, max_steps=self.prm_steps, seed=self.seed)

    def rl_config(self, steps: int | None = None) -> RLRunConfig:
        """The GRPO run of a round (or ``steps`` of them: the single-run baseline)."""
        return RLRunConfig(arms=(self.arm,), steps=steps or self.rl_steps, batch_size=self.rl_batch_size,
                           error_threshold=self.error_threshold,
                           num_generations=self.num_generations, eval_problems=self.eval_problems,
                           eval_samples=self.eval_samples, seed=self.seed, save_policy=True)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return json.loads(json.dumps(asdict(self)))
