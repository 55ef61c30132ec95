"""Misbehaving tasks for pool tests, imported by worker processes by module name."""

from __future__ import annotations

import os
import time


def misbehave(item: str) -> str:
    """``hang`` sleeps a minute, ``crash`` kills the worker, ``raise`` raises, ``hog`` asks for 3 GiB, anything else
    echoes."""
    if item == "hog":
        return str(len(bytearray(3 << 30)))
    if item == "hang":
        time.sleep(60)
    elif item == "crash":
        os._exit(3)
    elif item == "raise":
        raise RuntimeError("task failed")
    return item
