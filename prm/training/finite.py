"""A trained model is written only when every weight is finite.

An optimizer that diverged (a learning rate or weight decay too large for the model, however finite) leaves NaN or
infinite weights; every score read from such a folder is NaN, yet the training run itself finishes and exits 0. The
check runs after training and before each checkpoint, before a file of the model is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch


def nonfinite_weights(model: Any) -> tuple[int, int, str | None]:
    """``(non-finite weights, all weights, the first parameter holding one)`` of a torch module.

    >>> layer = torch.nn.Linear(2, 1)
    >>> nonfinite_weights(layer)
    (0, 3, None)
    >>> _ = layer.bias.data.fill_(float("nan"))
    >>> nonfinite_weights(layer)
    (1, 3, 'bias')
    """
    bad = total = 0
    first = None
    with torch.no_grad():
        for name, param in model.named_parameters():
            count = int((~torch.isfinite(param)).sum())
            if count and first is None:
                first = name
            bad += count
            total += param.numel()
    return bad, total, first


def check_finite_weights(model: Any, out: str | Path, settings: Mapping[str, object]) -> None:
    """Refuse ``model`` when a weight is NaN or infinite: one line naming the weights, the folder nothing was saved
    to, and the ``settings`` (name: value) to lower.

    >>> layer = torch.nn.Linear(2, 1)
    >>> check_finite_weights(layer, "prm", {"learning_rate": 0.5})
    >>> _ = layer.weight.data.fill_(float("inf"))
    >>> check_finite_weights(layer, "prm", {"learning_rate": 0.5})
    Traceback (most recent call last):
    ...
    ValueError: training made 2 of 3 weights NaN or infinite (first: weight), so nothing was saved to prm: ...
    """
    bad, total, first = nonfinite_weights(model)
    if bad:
        lower = " or ".join(f"{name} (now {value:g})" if isinstance(value, float) else f"{name} (now {value})"
                            for name, value in settings.items())
        raise ValueError(f"training made {bad:,} of {total:,} weights NaN or infinite (first: {first}), so nothing was "
                         f"saved to {out}: the optimizer diverged - lower {lower} and train again")
