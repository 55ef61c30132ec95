"""Fixtures for search tests: a tiny real PRM folder (two training steps from a random char-level LM) with a short
context, so that a long step overflows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tiny_models import TinyModels

# Positions of the tiny PRM: a 2-operation word problem and a few steps fit; a 300-character step does not.
TINY_PRM_CONTEXT = 192


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    import torch

    torch.set_num_threads(1)  # the test machine is shared; tiny models gain nothing from more threads


@pytest.fixture(scope="session")
def tiny_prm(tiny_models: TinyModels) -> Path:
    """A real PRM folder (token-classification head + prm_convention.json); its scores mean nothing."""
    return tiny_models.prm(TINY_PRM_CONTEXT)
