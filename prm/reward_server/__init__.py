"""The reward service: a PRM folder behind HTTP for RL frameworks on other machines (``prm-reward serve``).

:mod:`prm.reward_server.app` holds the FastAPI app and its endpoints, :mod:`~prm.reward_server.batching` the
dynamic batcher that shares forward passes, :mod:`~prm.reward_server.http_limits` and
:mod:`~prm.reward_server.connection_share` what one client may send and hold, :mod:`~prm.reward_server.cli` the
command. The rewards themselves come from :mod:`prm.rewards`, the same code the TRL/verl/OpenRLHF adapters run.
This ``__init__`` imports no web framework, so ``prm-reward --help`` stays fast.
"""

from prm.reward_server.batching import BatchingConfig, DynamicBatcher
from prm.reward_server.http_limits import HttpLimits

__all__ = ["BatchingConfig", "DynamicBatcher", "HttpLimits"]
