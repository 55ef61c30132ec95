"""Fixed numbers and names of the RL runs, each with its reason."""

from __future__ import annotations

# The arms of the comparison. Every arm shares the policy, data, seed, optimizer and budget; only the reward
# differs (prm.rl.config.ARMS maps each name to its RewardConfig).
OUTCOME = "outcome"  # Math-Verify outcome only: the verifiable-reward baseline (DeepSeek-R1 style)
PRM_MIN = "prm_min"  # PRM min-form + outcome: PURE's safe credit assignment
PRM_SUM = "prm_sum"  # PRM summed + outcome: the naive form PURE reports hacked (more steps, more reward)
PRM_MIN_PROF = "prm_min_prof"  # PRM min-form + outcome, PROF-filtered (Ye et al. 2025): optional fourth arm
# DeepSeekMath's process-supervised GRPO: per-token advantages from group-normalised PRM step scores, mixed
# with the outcome reward's GRPO advantage (prm.rl.process_grpo)
PROCESS = "process"
# Credit that does not pay for fewer, longer steps (prm.rl.credit): the process arm with PURE's soft min-form credit
# and per-token baseline, the process arm with Gao et al.'s Clip-Delta, and prm_min with PURE's soft min (T = 0.1)
# in place of the hard min (one scalar per completion: GRPO's group baseline does not count steps).
PROCESS_PURE = "process_pure"
PROCESS_CLIP_DELTA = "process_clip_delta"
PRM_SOFT_MIN = "prm_soft_min"
# PRIME (prm.rl.prime): an implicit PRM scoring every token, updated online on each step's rollouts and outcomes;
# started from the step-trained LM-head PRM (prime) or from the policy itself, as PRIME does (prime_plain).
PRIME = "prime"
PRIME_PLAIN = "prime_plain"
# Arms that use the PRM only where it can be checked (prm.rl.verified_arms): VPPO's verified prefix (the PRM's first
# error splits each completion, the prefix rewarded, the rest penalised), PROGRS' outcome-conditioned centering (wrong
# answers' PRM scores centred among themselves, added to the outcome advantage) and FAPO's reduced reward for a right
# answer with a wrong step.
FIRST_ERROR = "first_error"
PROGRS = "progrs"
FLAWED_PENALTY = "flawed_penalty"
# Outcome share of the process arm's advantage, (1 - w) * process + w * outcome: 0.5, the same balance as the
# scalar PRM arms' outcome_weight (prm.rewards.constants.DEFAULT_OUTCOME_WEIGHT); 0 is DeepSeekMath's pure form.
DEFAULT_PROCESS_OUTCOME_WEIGHT = 0.5
# The TRL release whose GRPOTrainer internals the process arm overrides (tests/prm/rl/test_process_trl_pin.py).
PROCESS_TRL_VERSION = "1.16.0"

# Sampling knobs of the policy's own evaluation (prm.policy.evaluate): top_k=0 and top_p=1 sample the full
# distribution there, so GRPO samples the same way and "before" accuracy is measured on the training policy.
TOP_K = 0
TOP_P = 1.0

# vLLM colocated with training on one GPU: the ~1M-parameter policy needs little KV cache, so a small share
# leaves the rest of the card to the trainer and the PRM (TRL's default 0.3 is sized for 7B models).
VLLM_GPU_SHARE = 0.2

# Generation back ends (RLRunConfig.generation): "auto" picks vLLM on CUDA where it imports, else transformers.
GENERATIONS = ("auto", "transformers", "vllm")

# TRL log keys read into the reward curve (trl/trainer/grpo_trainer.py, _generate_and_score_completions):
# the mean total reward, its std within the batch, mean completion length in tokens (= characters for the
# char-level policy) and the share cut off by max_completion_length.
TRL_REWARD = "reward"
TRL_REWARD_STD = "reward_std"
TRL_LENGTH = "completions/mean_length"
TRL_CLIPPED = "completions/clipped_ratio"
TRL_KL = "kl"
TRL_ENTROPY = "entropy"
# Keys the prime trainer logs per step (prm.rl.prime): the online PRM's outcome loss and sign accuracy on the step's
# fresh rollouts, before its update.
PRIME_LOSS = "prime/prm_loss"
PRIME_ACCURACY = "prime/prm_accuracy"
# Keys the reward adapter logs per batch as "<reward name>/<key>" (prm.rewards.ShapedReward.extras).
ADAPTER_KEYS = ("outcome_reward", "process_reward", "min_step_score", "n_steps")

# Files written under an arm's folder and the comparison's folder.
RESULT_FILE = "result.json"
POLICY_SUBDIR = "policy"
TABLE_FILE = "comparison.md"
SUMMARY_FILE = "comparison.json"
PLOT_FILE = "rl_arms.png"

# Bounds of the RL settings (the optimizer's are prm.settings'). The KL coefficient: TRL's default is 0 and
# DeepSeekMath's 0.04; at 10 the KL term outweighs any reward in [-1, 1] tenfold, so more is a typo (sampling
# temperatures: prm.settings.check_temperature). Held-out problems (or samples) per difficulty: 100k is hours of
# sampling per evaluation.
MAX_KL_BETA = 10.0
MAX_EVAL = 100_000
