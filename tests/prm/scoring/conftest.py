"""Scoring tests use the tiny random PRMs of every step-tag convention: ``prm_folders`` (tests/conftest.py),
built by ``build_prm`` in tests/tiny_models.py."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    import torch

    torch.set_num_threads(1)  # the test machine is shared; tiny models gain nothing from more
