"""Fixtures for the reward server's tests: the reward tests' tiny LM and PRM (tests/prm/rewards/conftest.py)."""

from tests.prm.rewards.conftest import _one_thread, tiny_lm, tiny_prm  # noqa: F401  (pytest finds them here)
