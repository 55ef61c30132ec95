"""The base of every asset's run config: numbers a user types in the launchpad (or a schedule's run config) are
checked when Dagster builds the config, before the asset does any work, as recipes are checked at their dry run.

Dagster's own config schema checks types only, so a NaN or an infinity in a float field used to reach the library
config (or a training loop) unchecked. Here a non-finite number is refused naming its field, and a config that
converts to its library config with no arguments (``to_library()``) is converted, so the library's bounds
(``prm.settings``) apply at the same moment.
"""

# No `from __future__ import annotations`: Dagster reads Config annotations at definition time.
import inspect
import math

import dagster as dg
from pydantic import model_validator


def _non_finite(value: object, where: str) -> str | None:
    """The path of a non-finite float inside ``value`` (a number, list or dict), or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return where
    if isinstance(value, list | tuple):
        return next((w for i, v in enumerate(value) if (w := _non_finite(v, f"{where}[{i}]"))), None)
    if isinstance(value, dict):
        return next((w for k, v in value.items() if (w := _non_finite(v, f"{where}.{k}"))), None)
    return None


class CheckedConfig(dg.Config):
    """A ``dg.Config`` whose numbers are finite and whose library config (a zero-argument ``to_library``) builds."""

    @model_validator(mode="after")
    def _checked(self):
        for name in type(self).model_fields:
            where = _non_finite(getattr(self, name), name)
            if where is not None:
                raise ValueError(f"{where}={getattr(self, name)!r} is not a finite number; set a finite value")
        to_library = getattr(self, "to_library", None)
        if to_library is not None and not [p for p in inspect.signature(to_library).parameters.values()
                                           if p.default is inspect.Parameter.empty]:
            to_library()  # raises the library's one-line ValueError (prm.settings bounds) at config time
        return self
