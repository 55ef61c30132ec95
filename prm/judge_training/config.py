"""How the judge is fine-tuned and on what: base model, LoRA, optimizer budget in steps, the problems sampled."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from prm.settings import (
    check_batch,
    check_count,
    check_learning_rate,
    check_lora,
    check_seed,
    check_steps,
    check_threads,
    check_tokens,
)
from prm.tasks import MAX_OPS

# Problems per difficulty or samples per problem of the judge's data: each is a policy sample the judge is trained
# on at ~25 s a step of 8; 100k is weeks of training, so a larger number is a typo.
MAX_JUDGE_DATA = 100_000
# Problem seeds of the judge's data, apart from the arith source's (day-seeded) and the RL and PRM benchmarks'.
JUDGE_TRAIN_SEED, JUDGE_EVAL_SEED = 9_000, 9_500


@dataclass(frozen=True)
class JudgeTrainConfig:
    """One judge fine-tuning run; :func:`prm.judge_training.train.train_judge` reads nothing else.

    >>> JudgeTrainConfig(lora_r=0)
    Traceback (most recent call last):
    ...
    ValueError: lora_r=0: the judge ships as a LoRA adapter; use a rank >= 1
    """

    base_model: str = "smollm2-135m-instruct"  # the embedded instruct LLM (prm.models)
    policy: str = "arith-policy"  # whose samples the judge learns to check: the pipeline's policy
    # --- data: word problems of the policy's task, 4 samples each, balanced by first-error position ---
    ops: tuple[int, ...] = (2, 3, 4, 5, 6, 7, 8)
    problems_per_ops: int = 120
    samples_per_problem: int = 4
    eval_problems_per_ops: int = 12
    # --- LoRA on every projection of every layer ---
    lora_r: int = 16  # ~4.9M parameters: a ~10 MB bf16 adapter, small enough to ship in the repository
    lora_alpha: int = 32
    target_modules: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
    # --- optimizer budget: steps, never wall-clock time ---
    learning_rate: float = 5e-4
    max_steps: int = 160  # ~0.8 passes over ~1,600 balanced solutions (each ~440 tokens; ~25 s a step on 2 cores)
    batch_size: int = 8
    warmup_steps: int = 10
    max_length: int = 768  # prompt + verdict of an 8-step solution is ~600 tokens
    seed: int = 0
    torch_threads: int = 2  # a fixed count: the same reduction order, so the same weights, on every run

    def __post_init__(self) -> None:
        object.__setattr__(self, "ops", tuple(self.ops))
        object.__setattr__(self, "target_modules", tuple(self.target_modules))
        if isinstance(self.lora_r, int) and self.lora_r < 1:
            raise ValueError(f"lora_r={self.lora_r}: the judge ships as a LoRA adapter; use a rank >= 1")
        check_lora("lora_r", self.lora_r)
        check_lora("lora_alpha", self.lora_alpha)
        check_learning_rate("learning_rate", self.learning_rate)
        check_steps("max_steps", self.max_steps)
        check_steps("warmup_steps", self.warmup_steps, low=0)
        check_batch("batch_size", self.batch_size)
        check_tokens("max_length", self.max_length)
        check_seed("seed", self.seed)
        check_threads("torch_threads", self.torch_threads)
        for name in ("problems_per_ops", "samples_per_problem", "eval_problems_per_ops"):
            check_count(name, getattr(self, name), high=MAX_JUDGE_DATA, why="sampled solutions for the judge's data")
        if any(isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_OPS for n in self.ops):
            raise ValueError(f"ops={self.ops} must hold operation counts in 1..{MAX_OPS}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
