"""Checks for numeric settings: one validator per kind of number (finite, in range, a count, a seed), used by every
config that reads one, so a NaN, an infinity or an absurd size is refused where it is read, with the bound and why.

The bottom layer of ``prm`` beside ``prm.files``: it imports no other package of the project.
"""

from prm.settings.bounds import MAX_SEED, check_count, check_finite, check_range, check_seed

__all__ = ["MAX_SEED", "check_count", "check_finite", "check_range", "check_seed"]
