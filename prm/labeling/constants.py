"""Fixed numbers of the labelers, each with its reason."""

from __future__ import annotations

# Bumped whenever a labeler's output for the same inputs can change; stored in step_labels.labeler_version.
LABELER_VERSION = "labeling-1"

# Seconds per formal step check: SymPy and Z3 answer a checkable step in milliseconds; a hung or exploding one
# becomes ``unverifiable`` at this bound instead of holding the partition.
FORMAL_TIMEOUT_S = 2.0

# Math-Shepherd (Wang et al. 2024) rolls out N=8 completions per step prefix; OmegaPRM uses k=8 too.
DEFAULT_N_ROLLOUTS = 8

# OmegaPRM paper defaults (Luo et al. 2024, sec. 3.3 / appendix): Q(s,r) = alpha^(1-MC(s)) * beta^(len(r)/L).
OMEGA_ALPHA = 0.5  # prefers states whose MC is high (a wrong rollout from a likely-good state hides a real error)
OMEGA_BETA = 0.9  # prefers short rollouts (fewer steps to search, and long wrong rollouts are often degenerate)
OMEGA_LENGTH_TOKENS = 500  # L: normalises len(r), counted in tokens (not words, a bug of public ports)
OMEGA_C_PUCT = 0.125  # exploration weight of U(s) = c_puct * sqrt(sum N) / (1 + N(s))
OMEGA_MAX_SEARCHES = 100  # paper's per-question search limit

# Seeds handed to the engine stay in the positive 31-bit range vLLM and torch accept.
SEED_MODULUS = 2**31 - 1

from prm.format import STATUS_BY_CONVENTION, STATUS_LABELED, STATUS_PSEUDO, STATUS_UNVERIFIABLE  # noqa: E402, F401
