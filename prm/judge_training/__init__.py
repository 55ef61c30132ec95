"""A generative step verifier for the LLM-judge labeler: SmolLM2 fine-tuned (LoRA) on solutions with exact truth to
write, for the judge's own prompt, a short check of each step and the earliest wrong one in ``\\boxed{}``."""

from prm.judge_training.config import JudgeTrainConfig
from prm.judge_training.data import JudgeExample
from prm.judge_training.train import judge_examples

__all__ = ["JudgeExample", "JudgeTrainConfig", "judge_examples"]
