"""One RL comparison: the arms (each a reward definition) and everything they share."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from types import MappingProxyType

from prm.policy import MAX_OPERAND
from prm.rewards import DEFAULT_TEMPERATURE, RewardConfig
from prm.rl.constants import (
    FIRST_ERROR,
    FLAWED_PENALTY,
    GENERATIONS,
    MAX_EVAL,
    MAX_KL_BETA,
    OUTCOME,
    PRIME,
    PRIME_PLAIN,
    PRM_MIN,
    PRM_MIN_PROF,
    PRM_SOFT_MIN,
    PRM_SUM,
    PROCESS,
    PROCESS_CLIP_DELTA,
    PROCESS_PURE,
    PROGRS,
)
from prm.rl.prime import PrimeConfig
from prm.rl.process_grpo import ProcessConfig
from prm.rl.verified_arms import DEFAULT_FLAWED_PENALTY, FIRST_ERROR_THRESHOLD, flawed_reward_config
from prm.settings import (
    check_batch,
    check_count,
    check_finite,
    check_learning_rate,
    check_range,
    check_seed,
    check_steps,
    check_temperature,
    check_threads,
    check_tokens,
)
from prm.tasks import MAX_OPS, OPERATORS, STYLES

# The reward of each arm. Outcome-only still scores the PRM (weight 0), so its logs carry the same PRM
# statistics (min step score, steps) as the PRM arms and the curves compare like for like.
ARMS: MappingProxyType[str, RewardConfig] = MappingProxyType({
    OUTCOME: RewardConfig(shaping="min", outcome_weight=1.0),
    PRM_MIN: RewardConfig(shaping="min", outcome_weight=0.5),
    PRM_SUM: RewardConfig(shaping="sum", outcome_weight=0.5),
    PRM_MIN_PROF: RewardConfig(shaping="min", outcome_weight=0.5, prof_filter=True),
    # The process arm's reward function returns the outcome only (TRL's advantage is then the outcome one) and
    # records the PRM's step scores; PROCESS_ARMS says how the per-token advantages mix the two.
    PROCESS: RewardConfig(shaping="min", outcome_weight=1.0),
    PROCESS_PURE: RewardConfig(shaping="min", outcome_weight=1.0),
    PROCESS_CLIP_DELTA: RewardConfig(shaping="min", outcome_weight=1.0),
    PRM_SOFT_MIN: RewardConfig(shaping="soft_min", temperature=DEFAULT_TEMPERATURE, outcome_weight=0.5),
    # The prime arms' reward function returns the outcome (PRIME's verifier) and records the reward PRM's step
    # scores for the logs; their advantages come from the online implicit PRM (PRIME_ARMS).
    PRIME: RewardConfig(shaping="min", outcome_weight=1.0),
    PRIME_PLAIN: RewardConfig(shaping="min", outcome_weight=1.0),
    # prm.rl.verified_arms. first_error and progrs return the outcome and record the step scores, as the process arm;
    # their advantages come from PROCESS_ARMS. flawed_penalty is a scalar reward: FAPO's, at the default penalty
    # (RLRunConfig.flawed_penalty sets the one a run uses: arm_reward_config).
    FIRST_ERROR: RewardConfig(shaping="min", outcome_weight=1.0),
    PROGRS: RewardConfig(shaping="min", outcome_weight=1.0),
    FLAWED_PENALTY: flawed_reward_config(DEFAULT_FLAWED_PENALTY),
})
# Arms trained by prm.rl.process_grpo's trainer (per-token advantages) instead of TRL's GRPOTrainer.
PROCESS_ARMS: MappingProxyType[str, ProcessConfig] = MappingProxyType({
    PROCESS: ProcessConfig(),
    PROCESS_PURE: ProcessConfig(credit="pure"),
    PROCESS_CLIP_DELTA: ProcessConfig(credit="clip_delta"),
    FIRST_ERROR: ProcessConfig(credit="first_error"),
    PROGRS: ProcessConfig(credit="progrs"),
})
# Arms trained by prm.rl.prime's trainer: PRIME's online implicit PRM, from the LM-head PRM or from the policy.
PRIME_ARMS: MappingProxyType[str, PrimeConfig] = MappingProxyType({
    PRIME: PrimeConfig(start="prm"),
    PRIME_PLAIN: PrimeConfig(start="policy"),
})


@dataclass(frozen=True)
class RLRunConfig:
    """What every arm of :func:`prm.rl.compare_arms` shares; :func:`prm.rl.run_grpo` reads nothing else.

    >>> RLRunConfig(batch_size=12, num_generations=8)
    Traceback (most recent call last):
    ...
    ValueError: batch_size=12 must be a multiple of num_generations=8: GRPO scores each prompt's ...
    >>> RLRunConfig(arms=("outcome", "prm_mean"))
    Traceback (most recent call last):
    ...
    ValueError: arms ('prm_mean',) are unknown; choose from ('outcome', 'prm_min', 'prm_sum', 'prm_min_prof', ...
    """

    arms: tuple[str, ...] = (OUTCOME, PRM_MIN, PRM_SUM)  # the three; PRM_MIN_PROF is the optional fourth
    steps: int = 100  # optimizer steps per arm: the same budget for every arm, never wall-clock time
    # --- training problems: longer than the policy's 1-8 operations, plus in-range anchors ---
    train_ops: tuple[int, ...] = (9, 10)  # the target: chains longer than any the policy was trained on
    # In-range problems the policy solves often enough that GRPO groups hold both right and wrong answers.
    # Measured on the shipped policy: 0 of 64 samples right at 9 and 10 operations (it stops after <= 8
    # steps), so there an outcome-only group is all wrong, has zero advantage and teaches nothing.
    anchor_ops: tuple[int, ...] = (6, 7, 8)
    anchor_share: float = 0.5  # share of training problems drawn from anchor_ops
    operators: str = "+-"  # the policy's task (prm.policy.PolicyTrainConfig): running totals of +/-
    max_value: int = 9  # single-digit operands, as the policy was trained on
    style: str = "word"  # word problems, one `a op b = c` step per line
    # --- GRPO ---
    num_generations: int = 8  # completions per prompt (the group GRPO normalises advantages within)
    batch_size: int = 32  # completions per optimizer step (4 prompts x 8): ~3 s a step on one CPU thread
    learning_rate: float = 1e-4  # 20x below the policy's SFT rate: RL nudges a trained policy
    beta: float = 0.0  # KL to the reference; 0 (TRL's default, after DAPO) skips loading a reference model
    # 10 word-problem steps plus the answer line are ~110 characters; 200 leaves room to write more steps
    # (the summed reward's hack) without letting a looping sample run long.
    max_completion_length: int = 200
    temperature: float = 1.0  # the policy's own sampling temperature (its card is measured at 1.0)
    seed: int = 0  # seeds data, model init of the run, sampling and the held-out problems
    # CPU threads: one keeps runs reproducible and stops two torch processes oversubscribing a 2-core box
    # (as PolicyTrainConfig.torch_threads). Ignored on CUDA.
    torch_threads: int = 1
    generation: str = "auto"  # "auto" (vLLM on CUDA where it imports), "transformers" or "vllm"
    # --- held-out evaluation (prm.policy.evaluate), before and after ---
    # Difficulties evaluated, reported each and pooled: the anchors' range (where RL can sharpen the policy)
    # and the longer problems (where it must learn to write more steps than it was ever shown).
    eval_ops: tuple[int, ...] = (6, 7, 8, 9, 10)
    eval_problems: int = 24  # per difficulty, never trained on (x eval_samples: 480 samples, ~1 min on CPU)
    eval_samples: int = 4  # samples per problem at eval_temperature
    eval_temperature: float = 1.0  # as the policy card and the training samples
    # Held-out accuracy (and steps, characters, PRM score) every this many steps besides before and after
    # (prm.rl.curve): the learning curve, and what marks a run hacked. 0: before and after only.
    eval_every: int = 0
    logging_steps: int = 1  # every step: the reward curve is the point
    save_policy: bool = True  # keep each arm's trained policy under <out>/<arm>/policy
    # The flawed_penalty arm (FAPO): a right answer with a step the PRM scores below its threshold earns 1 - this.
    # FAPO's parameter-free choice is 0.5 on this {0, 1} outcome scale (prm.rl.verified_arms); choose another on
    # validation. 0: the outcome arm; 1: a flawed positive earns what a wrong answer does.
    flawed_penalty: float = DEFAULT_FLAWED_PENALTY
    # The first_error (VPPO) and flawed_penalty (FAPO) arms: a step the PRM scores below this P(good) is an error.
    # The default is the PRM's own class boundary (0.5); the shipped arith-prm scores held-out 6-10-operation samples
    # at a mean lowest step of 0.13, so there nearly every right answer reads flawed. Choose it on validation problems
    # (benchmarks/rl_threshold.py); run_key holds it only where it differs from this default.
    error_threshold: float = FIRST_ERROR_THRESHOLD

    def __post_init__(self) -> None:
        for f in fields(self):  # 1 and 1.0 are one config; a NaN or an infinity is refused here
            if f.type in (float, "float"):
                object.__setattr__(self, f.name, check_finite(f.name, getattr(self, f.name)))
        for name in ("arms", "train_ops", "anchor_ops", "eval_ops"):
            object.__setattr__(self, name, tuple(getattr(self, name)))  # lists from YAML/JSON/Dagster
        unknown = tuple(a for a in self.arms if a not in ARMS)
        if unknown or not self.arms:
            raise ValueError(f"arms {unknown} are unknown; choose from {tuple(ARMS)}")
        if len(set(self.arms)) != len(self.arms):
            raise ValueError(f"arms={self.arms} repeats an arm; each arm runs once")
        self._check_numbers()
        if self.num_generations < 2:
            raise ValueError(f"num_generations={self.num_generations} must be >= 2: GRPO's advantage is a "
                             "completion's reward relative to its group, and a group of one has none")
        if self.batch_size % self.num_generations:
            raise ValueError(f"batch_size={self.batch_size} must be a multiple of num_generations="
                             f"{self.num_generations}: GRPO scores each prompt's {self.num_generations} "
                             "completions together, so a batch holds whole groups")
        for name in ("train_ops", "anchor_ops", "eval_ops"):
            ops = getattr(self, name)
            if any(isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_OPS for n in ops):
                raise ValueError(f"{name}={ops} must hold operation counts in 1..{MAX_OPS}")
        if not self.train_ops or not self.eval_ops:
            raise ValueError("train_ops and eval_ops need at least one difficulty each")
        if self.anchor_share > 0 and not self.anchor_ops:
            raise ValueError(f"anchor_share={self.anchor_share} needs anchor_ops when > 0")
        if not self.operators or set(self.operators) - set(OPERATORS):
            raise ValueError(f"operators={self.operators!r} must be a non-empty subset of {OPERATORS!r}")
        if self.style not in STYLES:
            raise ValueError(f"style={self.style!r} must be one of {STYLES}")
        if self.generation not in GENERATIONS:
            raise ValueError(f"generation={self.generation!r} must be one of {GENERATIONS}")

    def _check_numbers(self) -> None:
        """Every numeric field finite and in its range, with the bound's reason (prm.settings, prm.rl.constants)."""
        check_steps("steps", self.steps)
        check_range("anchor_share", self.anchor_share, low=0.0, high=1.0, high_open=True,
                    why="a share of the training problems; some must be the target difficulty")
        check_count("max_value", self.max_value, high=MAX_OPERAND, why="the largest operand of the problems")
        check_batch("num_generations", self.num_generations)
        check_batch("batch_size", self.batch_size)
        check_learning_rate("learning_rate", self.learning_rate)
        check_range("beta", self.beta, low=0.0, high=MAX_KL_BETA,
                    why="a KL coefficient; 0 skips the reference, DeepSeekMath uses 0.04")
        check_tokens("max_completion_length", self.max_completion_length)
        check_temperature("temperature", self.temperature, low_open=True, why="GRPO needs varied samples")
        check_seed("seed", self.seed)
        check_threads("torch_threads", self.torch_threads)
        for name in ("eval_problems", "eval_samples"):
            check_count(name, getattr(self, name), high=MAX_EVAL, why="held-out problems and samples per difficulty")
        check_temperature("eval_temperature", self.eval_temperature)
        check_steps("eval_every", self.eval_every, low=0)  # 0: held-out accuracy before and after only
        check_steps("logging_steps", self.logging_steps)
        check_range("flawed_penalty", self.flawed_penalty, low=0.0, high=1.0,
                    why="a right answer with a flawed step earns 1 - penalty: between a right and a wrong answer")
        check_range("error_threshold", self.error_threshold, low=0.0, high=1.0,
                    why="a P(good) below which the PRM's step is an error (first_error, flawed_penalty)")

    @property
    def prompts_per_step(self) -> int:
        """Distinct problems per optimizer step.

        >>> RLRunConfig(batch_size=32, num_generations=8).prompts_per_step
        4
        """
        return self.batch_size // self.num_generations

    def reward_config(self, arm: str) -> RewardConfig:
        """The reward of ``arm`` under this config: :data:`ARMS` ``[arm]``, with :attr:`flawed_penalty` and
        :attr:`error_threshold` for the flawed_penalty arm.

        >>> RLRunConfig(flawed_penalty=0.25).reward_config("flawed_penalty").prof_weight
        0.75
        >>> RLRunConfig(error_threshold=0.1).reward_config("flawed_penalty").prof_low
        0.1
        """
        if arm == FLAWED_PENALTY:
            return flawed_reward_config(self.flawed_penalty, self.error_threshold)
        return ARMS[arm]

    def process_config(self, arm: str) -> ProcessConfig:
        """How process arm ``arm`` (:data:`PROCESS_ARMS`) mixes its advantages under this config: the first_error
        arm's threshold is :attr:`error_threshold`; the other process arms' configs are unchanged.

        >>> RLRunConfig(error_threshold=0.1).process_config("first_error").threshold
        0.1
        >>> RLRunConfig(error_threshold=0.1).process_config("process") is PROCESS_ARMS["process"]
        True
        """
        if arm == FIRST_ERROR:
            return replace(PROCESS_ARMS[arm], threshold=self.error_threshold)
        return PROCESS_ARMS[arm]

    def to_dict(self) -> dict:
        """JSON-ready fields (tuples become lists)."""
        return json.loads(json.dumps(asdict(self)))
