"""Framework adapters over :class:`prm.rewards.Rewarder`, one module per framework, each importing nothing
of its framework: ``trl`` (``make_trl_reward``), ``verl`` (``compute_score``), ``openrlhf`` (``reward_func``).

verl and OpenRLHF load their module *by file path*, so those modules use absolute imports only and find the
PRM folder through a kwarg or the ``PRM_REWARD_MODEL`` environment variable.
"""

from prm.rewards.adapters.messages import completion_text, problem_text

__all__ = ["completion_text", "problem_text"]
