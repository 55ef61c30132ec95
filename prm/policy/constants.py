"""Fixed numbers of the warm-start policy, each with its reason."""

from __future__ import annotations

# Special tokens. The model never sees <unk> in training (every generator character is in the charset);
# it exists so that hostile prompt text still tokenizes.
PAD_TOKEN = "<pad>"
BOS_TOKEN = "<s>"
EOS_TOKEN = "</s>"
UNK_TOKEN = "<unk>"
SPECIAL_TOKENS = (PAD_TOKEN, BOS_TOKEN, EOS_TOKEN, UNK_TOKEN)

# Printable ASCII plus newline: covers every character the arithmetic generator writes (digits, + - * =,
# the word-problem stories) with a 100-symbol vocabulary, so one token is one character.
CHARSET = "\n" + "".join(chr(c) for c in range(32, 127))

# Rotary positions the model supports: an 8-op chain prompt plus solution is ~450 characters, and 1024
# leaves room for longer word stories and for rambling samples before max_new_tokens stops them.
MAX_POSITIONS = 1024

# Completion length cap at sampling time: gold solution length times this plus a margin, so a sample
# that loops is cut without truncating any near-gold answer.
MAX_NEW_TOKENS_FACTOR = 1.5
MAX_NEW_TOKENS_MARGIN = 32

# Files of a saved policy folder (a HuggingFace model folder plus this card).
CARD_FILE = "policy_card.json"
WEIGHT_FILE_GLOBS = ("*.safetensors", "*.bin")

# The band a policy's card must lie in at the stop rule's difficulty (8 steps) for the labelers to work.
# Monte-Carlo labels are informative where a problem's samples disagree (mixed share) and where a correct
# prefix usually reaches the answer (low per-step error): with a per-step error above ~0.25 rollouts from
# good prefixes fail and good steps get labeled bad; with accuracy above ~0.97 there is no wrong step to
# find; below ~0.1 nearly every sample is wrong. Measured: a build cut short on a busy machine scored
# accuracy 0.09 / step error 0.94 (outside); the shipped policy 0.27 / 0.136 with a mixed share of 0.50.
CARD_BAND = {"answer_accuracy": (0.1, 0.97), "step_error_rate": (0.002, 0.25), "mixed_share": (0.2, 1.0)}

# Bounds of PolicyTrainConfig's model and data sizes (the optimizer's are prm.settings'): the policy is a ~1M-parameter
# Llama trained on CPU in minutes; a width past 16k or depth past 256 layers is a 100B-parameter model, and a pool of
# 100M problems takes hours just to generate: larger values are typos. Held-out problems (or samples) per stop-rule
# evaluation: each costs a sampling pass at every eval_every_steps. Operands past a million (the policy's and the RL
# arms' max_value) are digit copying, not the single-digit arithmetic the policy learns.
MAX_OPERAND = 1_000_000
MAX_WIDTH = 16_384
MAX_LAYERS = 256
MAX_PROBLEMS = 100_000_000
MAX_EVAL = 100_000
