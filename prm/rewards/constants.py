"""Fixed numbers and names of RL reward shaping, each with its reason."""

from __future__ import annotations

# The step score a completion with no steps is shaped as: one step the PRM calls certainly bad. A bare 0.0
# process reward would be the *best* value under Clip (whose rewards are <= 0), so writing nothing would beat
# writing anything; scoring "no steps" as a single P(good) = 0 step gives the worst single-step value under
# every shaping (0 for min/mean/sum/last/delta, -eta for Clip).
NO_STEP_SCORE = 0.0

# PURE's temperature for the soft min (Cheng et al. 2025, "Stop Summation: Min-Form Credit Assignment Is All
# Process Reward Model Needs for Reasoning"): at 0.1 the softmax(-r/T) weights put almost all mass on the
# lowest step of P(good) scores in [0, 1], so it behaves like the min while keeping a gradient to the others.
DEFAULT_TEMPERATURE = 0.1
# Past this temperature softmax(-r/T) over P(good) scores in [0, 1] weighs every step within 1% of the others: the
# plain mean (shaping="mean" says so), and a larger value is a typo.
MAX_TEMPERATURE = 100.0

# Clip's threshold (Gao et al. 2024, "On Designing Effective RL Reward at Training Time for LLM Reasoning"):
# min(r - eta, 0) with eta = 0.5 makes a step the PRM calls more likely good than bad cost nothing, so the
# return is bounded above by 0 and adding more "good-looking" steps can never raise it.
DEFAULT_ETA = 0.5

# Outcome weight of the mix (1 - w) * process + w * outcome. 0.5 weights a right answer (1.0) the same as a
# perfect process (P(good) = 1 at every step), the balance PURE's mixed verifiable + PRM runs use.
DEFAULT_OUTCOME_WEIGHT = 0.5

# PROF-style consistency filter (Ye et al. 2025, "Beyond Correctness: Harmonizing Process and Outcome Rewards
# through RL Training"): a right answer is suspect when some step has P(good) below PROF_LOW, a wrong one when
# every step has P(good) above PROF_HIGH. 0.5 is where the PRM's two classes meet.
DEFAULT_PROF_LOW = 0.5
DEFAULT_PROF_HIGH = 0.5
# Weight given to a sample whose outcome and process disagree: 0 drops it (its shaped reward becomes 0).
DEFAULT_PROF_WEIGHT = 0.0

# Special-token texts that trail (or lead) a decoded completion when a framework decodes with
# skip_special_tokens=False (OpenRLHF decodes prompt + response that way) or pads text: stripped before
# segmenting, so a pad run is never a step and never hides the final answer line.
PAD_TEXTS = ("<pad>", "</s>", "<s>", "<|endoftext|>", "<|im_end|>", "<|eot_id|>", "<|end_of_text|>",
             "<|end|>", "<eos>", "<|pad|>", "[PAD]")

# Environment variable naming the PRM folder for the file-style adapters (verl, OpenRLHF) that the framework
# loads by path and calls without a place to pass it.
PRM_DIR_ENV = "PRM_REWARD_MODEL"
# Optional: the shaping name for those adapters (RewardConfig.shaping), when no kwarg sets it.
SHAPING_ENV = "PRM_REWARD_SHAPING"
# Optional, OpenRLHF's file-style reward_func: "1" adds each sample's per-step scores ("step_rewards") to its
# result; OpenRLHF reads only rewards/scores/extra_logs, so the key is there for a customised experience maker.
STEPS_ENV = "PRM_REWARD_STEPS"
