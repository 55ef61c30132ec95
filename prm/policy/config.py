"""Configuration of the warm-start policy: model size, data mix, budget and the stop rule."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields

from prm.policy.constants import MAX_EVAL, MAX_LAYERS, MAX_OPERAND, MAX_PROBLEMS, MAX_WIDTH
from prm.settings import (
    check_batch,
    check_count,
    check_finite,
    check_learning_rate,
    check_range,
    check_seed,
    check_steps,
    check_threads,
    check_weight_decay,
)
from prm.tasks import MAX_OPS, OPERATORS, STYLES

OPS_MIXES = ("uniform", "proportional")


@dataclass(frozen=True)
class PolicyTrainConfig:
    """How to train the default policy; the folder cache keys on :meth:`config_hash`."""

    # --- budget: optimizer steps, never wall-clock time, so a busy machine trains the same model slower ---
    # Measured here (session 2): the stop rule ended a 0.2 s/step build at ~6,000 steps with an 8-step
    # per-step error below 4%; the cosine schedule runs over max_steps.
    max_steps: int = 6_000
    # CPU threads for training and the stop-rule evaluations. One thread: a 0.9M-parameter model gains
    # little from two, and a fixed count keeps the floating-point reduction order (so the weights) the same
    # on every machine and stops two torch processes from oversubscribing a 2-core box.
    torch_threads: int = 1
    # --- optimizer ---
    learning_rate: float = 2e-3  # high for AdamW, fine for a ~1M-param model trained for minutes
    min_lr_ratio: float = 0.1  # cosine floor, as a fraction of learning_rate
    warmup_steps: int = 100  # linear warmup, ~2% of the steps a CPU budget allows
    weight_decay: float = 0.01  # light regularisation; the data is unlimited so overfitting is unlikely
    batch_size: int = 16  # CPU tokens/s is nearly flat from 8 to 32 sequences; 16 measured best here
    # --- model (Llama architecture) ---
    hidden_size: int = 128  # ~0.9M parameters with 4 layers: trains to useful accuracy in minutes on CPU
    num_layers: int = 4  # depth; 4 layers can copy an expression and carry one digit at a time
    num_heads: int = 4  # head_dim 32 (vLLM CPU supports it); more heads, more chances for copy heads
    intermediate_size: int = 384  # 3x hidden, SwiGLU
    # --- data: gold demonstrations from prm.tasks.arithmetic ---
    min_ops: int = 1  # easiest problems in the mix
    max_ops: int = 8  # hardest; the product asks for 8-step chains
    # "proportional": a problem with n ops is n times as likely as a 1-op one, so the step positions late
    # in long problems (where this policy slips most) get training signal comparable to the early ones;
    # "uniform": every n_ops equally likely (position 8 then appears in 1/8 of the examples).
    ops_mix: str = "proportional"
    # Word problems with one `a op b = c` step per line: measured here, 300 s reach 73% on 2-step problems,
    # while the chain style's rewrite steps (copying the whole expression each line) stayed near 0% after 840 s.
    styles: tuple[str, ...] = ("word",)
    operators: str = "+-"  # running totals of +/-: learnable in minutes, still slips (e.g. `-6-8 = -12`)
    max_value: int = 9  # single-digit operands; totals stay within two digits
    n_train_problems: int = 60_000  # demonstration pool; more than the budget consumes (~45k at bs 8)
    seed: int = 0  # seeds data, model init and sampling
    # --- stop rule: keep the policy imperfect so Monte-Carlo labels see both outcomes ---
    eval_every_steps: int = 500  # optimizer steps between held-out evaluations (each costs ~10 s on CPU)
    eval_problems: int = 16  # held-out problems at eval_ops per evaluation
    eval_samples: int = 2  # samples per problem at temperature 1.0
    eval_ops: int = 8  # difficulty the stop rule watches
    stop_step_error_below: float = 0.04  # stop once the per-step error rate is below this
    stop_accuracy_above: float = 0.7  # or once final-answer accuracy at eval_ops passes this
    logging_steps: int = 25  # Trainer loss logging interval

    def __post_init__(self) -> None:
        for f in fields(self):  # 1 and 1.0 are one config: same hash, same cached policy; NaN and infinity refused
            if f.type in (float, "float"):
                object.__setattr__(self, f.name, check_finite(f.name, getattr(self, f.name)))
        self._check_numbers()
        if not self.min_ops <= self.max_ops:
            raise ValueError(f"need 1 <= min_ops <= max_ops, got {self.min_ops}..{self.max_ops}")
        if self.ops_mix not in OPS_MIXES:
            raise ValueError(f"ops_mix={self.ops_mix!r} must be one of {OPS_MIXES}")
        if not self.styles or set(self.styles) - set(STYLES):
            raise ValueError(f"styles={self.styles!r} must be a non-empty subset of {STYLES}")
        if set(self.operators) - set(OPERATORS):
            raise ValueError(f"operators={self.operators!r} must be a subset of {OPERATORS!r}")
        if self.hidden_size % self.num_heads:
            raise ValueError(f"hidden_size={self.hidden_size} must be divisible by num_heads={self.num_heads}")

    def _check_numbers(self) -> None:
        """Every numeric field finite and in its range, with the bound's reason (prm.settings, prm.policy.constants)."""
        for name in ("max_steps", "eval_every_steps", "logging_steps"):
            check_steps(name, getattr(self, name))
        check_steps("warmup_steps", self.warmup_steps, low=0)
        check_threads("torch_threads", self.torch_threads)
        check_learning_rate("learning_rate", self.learning_rate)
        check_range("min_lr_ratio", self.min_lr_ratio, low=0.0, high=1.0,
                    why="the cosine floor, a share of learning_rate")
        check_weight_decay("weight_decay", self.weight_decay)
        check_batch("batch_size", self.batch_size)
        for name in ("hidden_size", "intermediate_size"):
            check_count(name, getattr(self, name), high=MAX_WIDTH, why="a ~1M-parameter policy trained on CPU")
        for name in ("num_layers", "num_heads"):
            check_count(name, getattr(self, name), high=MAX_LAYERS, why="a ~1M-parameter policy trained on CPU")
        for name in ("min_ops", "max_ops", "eval_ops"):
            check_count(name, getattr(self, name), high=MAX_OPS, why="operations of an arithmetic problem")
        check_count("max_value", self.max_value, high=MAX_OPERAND, why="the largest operand")
        check_count("n_train_problems", self.n_train_problems, high=MAX_PROBLEMS, why="the demonstration pool")
        check_seed("seed", self.seed)
        for name in ("eval_problems", "eval_samples"):
            check_count(name, getattr(self, name), high=MAX_EVAL, why="held-out sampling at every evaluation")
        for name in ("stop_step_error_below", "stop_accuracy_above"):
            check_range(name, getattr(self, name), low=0.0, high=1.0,
                        why="stop thresholds are rates in [0, 1]; set 0 / 1 to disable them")

    def to_dict(self) -> dict:
        """JSON-ready fields (tuples become lists)."""
        return json.loads(json.dumps(asdict(self)))

    def config_hash(self) -> str:
        """Stable 16-hex digest of every field; a saved policy is reused only when it matches.

        >>> PolicyTrainConfig().config_hash() == PolicyTrainConfig().config_hash()
        True
        >>> PolicyTrainConfig(seed=1).config_hash() == PolicyTrainConfig().config_hash()
        False
        >>> PolicyTrainConfig(learning_rate=1).config_hash() == PolicyTrainConfig(learning_rate=1.0).config_hash()
        True
        """
        payload = json.dumps(self.to_dict(), sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]
