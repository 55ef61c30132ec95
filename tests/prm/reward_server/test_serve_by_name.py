"""``prm-reward serve --prm arith-prm``: the shipped PRM served by its registered name, over real HTTP on
127.0.0.1 (the CLI in a process of its own, as tests/prm/reward_server/test_server.py runs it)."""

from __future__ import annotations

import httpx
import pytest

from prm.models import ARITH_PRM_NAME, SHIPPED_PRM_DIR
from prm.reward_server.cli import prm_folder
from tests.prm.reward_server.cli_process import served_cli


def test_the_cli_resolves_a_shipped_prm_by_name_and_refuses_an_unknown_one() -> None:
    assert prm_folder(ARITH_PRM_NAME) == SHIPPED_PRM_DIR
    assert prm_folder(SHIPPED_PRM_DIR) == SHIPPED_PRM_DIR
    with pytest.raises(FileNotFoundError, match=r"no PRM folder at arith-policy-typo \(no config.json\)"):
        prm_folder("arith-policy-typo")


def test_serve_prm_arith_prm_answers_over_http() -> None:
    with served_cli("--prm", ARITH_PRM_NAME, "--shaping", "min", "--outcome-weight", "0", "--device", "cpu",
                    "--threads", "1", "--log-level", "warning", env={"HF_HUB_DISABLE_PROGRESS_BARS": "1"}) as url:
        r = httpx.post(f"{url}/get_reward", json={"query": ["What is 2 + 3?\n2 + 3 = 5\nThe answer is 5"],
                                                 "prompts": ["What is 2 + 3?"], "labels": [""]})
        assert r.status_code == 200, r.text
        rewards = r.json()["rewards"]
        assert len(rewards) == 1 and 0.0 <= rewards[0] <= 1.0
