"""Validators for numbers a user sets: each returns the value (as its type) or raises one ``ValueError`` line that
names the setting, the value, the bound and why the bound is there."""

from __future__ import annotations

import math
from numbers import Integral, Real

# Seeds reach numpy (< 2**32), torch and vLLM's sampler; a seed outside [0, 2**32) fails deep inside one of them
# with a message about something else ("vLLM could not load model").
MAX_SEED = 2**32 - 1


def _why(why: str) -> str:
    return f" ({why})" if why else ""


def check_finite(name: str, value: object, *, why: str = "") -> float:
    """``value`` as a float if it is a finite real number (bools refused)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name}={value!r} must be a number{_why(why)}")
    try:
        number = float(value)
    except OverflowError:
        raise ValueError(f"{name}={value!r} is too large to be a float{_why(why)}") from None
    if not math.isfinite(number):
        raise ValueError(f"{name}={value!r} must be finite (not NaN or infinity){_why(why)}")
    return number


def check_range(name: str, value: object, *, low: float | None = None, high: float | None = None,
                low_open: bool = False, high_open: bool = False, why: str = "") -> float:
    """``value`` as a finite float within [low, high] (either end open or absent)."""
    number = check_finite(name, value, why=why)
    below = low is not None and (number <= low if low_open else number < low)
    above = high is not None and (number >= high if high_open else number > high)
    if below or above:
        left = "(-inf" if low is None else ("(" if low_open else "[") + f"{low:g}"
        right = "inf)" if high is None else f"{high:g}" + (")" if high_open else "]")
        raise ValueError(f"{name}={value!r} must be in {left}, {right}{_why(why)}")
    return number


def check_count(name: str, value: object, *, low: int = 1, high: int, why: str = "") -> int:
    """``value`` as an int in [low, high]: a count, a length or a budget (bools and floats refused)."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{name}={value!r} must be a whole number{_why(why)}")
    if not low <= int(value) <= high:
        raise ValueError(f"{name}={value!r} must be in [{low}, {high}]{_why(why)}")
    return int(value)


def check_seed(name: str, value: object) -> int:
    """``value`` as a seed every consumer accepts: an int in [0, 2**32 - 1]."""
    return check_count(name, value, low=0, high=MAX_SEED, why="numpy, torch and vLLM seeds are unsigned 32-bit")
