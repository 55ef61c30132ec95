"""A generative step verifier for the LLM-judge labeler: SmolLM2 fine-tuned (LoRA) on solutions with exact truth to
write, for the judge's own prompt, a short check of each step and the earliest wrong one in ``\\boxed{}``."""
