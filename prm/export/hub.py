"""Publishing a saved export to the Hugging Face Hub, only where a token and the network exist."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from urllib.parse import urlparse

HUB_CONNECT_TIMEOUT_S = 5.0  # a reachable hub answers a TCP connect in well under a second


class HubUnavailableError(RuntimeError):
    """No token, offline mode, or no route to the Hub: the export stays local."""


def _stored_token() -> str | None:
    from huggingface_hub import get_token

    return get_token()


def _hub_host() -> str:
    from huggingface_hub import constants

    return urlparse(constants.ENDPOINT).hostname or "huggingface.co"


def push_to_hub(folder: str | Path, repo_id: str, *, token: str | None = None, private: bool = True) -> str:
    """Push a :func:`prm.export.save_dataset` folder to ``repo_id``; returns the dataset's URL.

    Checks first, so a missing credential or network fails in a second with what to do, not after a
    long upload attempt: a token (argument, ``HF_TOKEN``, or ``hf auth login``), ``HF_HUB_OFFLINE`` unset,
    and a TCP route to the hub endpoint.
    """
    from datasets import load_from_disk
    from huggingface_hub import constants

    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a saved dataset folder; write it with save_dataset(rows, folder)")
    if constants.HF_HUB_OFFLINE or os.environ.get("HF_HUB_OFFLINE") in ("1", "true", "True"):
        raise HubUnavailableError("HF_HUB_OFFLINE is set, so nothing can be pushed; unset it on a machine with "
                                  f"network, or share the folder {folder} another way")
    token = token or os.environ.get("HF_TOKEN") or _stored_token()
    if not token:
        raise HubUnavailableError(f"no Hugging Face token to push {repo_id}; set HF_TOKEN, run `hf auth login`, "
                                  f"or pass token=..., or share the folder {folder} another way")
    host = _hub_host()
    try:
        socket.create_connection((host, 443), timeout=HUB_CONNECT_TIMEOUT_S).close()
    except OSError as err:
        raise HubUnavailableError(f"cannot reach {host} ({err}); push from a machine with network, or share "
                                  f"the folder {folder} another way") from None
    load_from_disk(str(folder)).push_to_hub(repo_id, token=token, private=private)
    return f"{constants.ENDPOINT}/datasets/{repo_id}"
