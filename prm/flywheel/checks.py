"""The rules a round must pass before the next one builds on it, as pure functions of registry metrics."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    """A rule's outcome and the sentence that says why."""

    passed: bool
    description: str


def prm_no_worse(k: int, metrics: Mapping[str, float], tolerance: float) -> Verdict:
    """Round ``k``'s PRM scores the round's held-out samples at least as well as the PRM it replaces (within
    ``tolerance`` F1). Round 0 replaces no PRM and passes; an F1 that cannot be computed fails.

    >>> prm_no_worse(1, {"f1_fresh": 0.60, "f1_previous": 0.62}, 0.05).passed
    True
    >>> prm_no_worse(1, {"f1_fresh": 0.50, "f1_previous": 0.62}, 0.05).description
    "new PRM F1 0.500 vs previous 0.620 on this round's held-out samples (tolerance 0.05)"
    >>> prm_no_worse(1, {"f1_fresh": 0.50}, 0.05).passed
    False
    """
    fresh, previous = metrics.get("f1_fresh"), metrics.get("f1_previous")
    if k == 0:
        return Verdict(True, "no previous PRM to compare with (round 0)")
    if fresh is None or previous is None:
        wrong, right = metrics.get("n_test_wrong"), metrics.get("n_test_right")
        held = "" if wrong is None or right is None else f" ({wrong:.0f} with a wrong step, {right:.0f} all correct)"
        return Verdict(False, f"no F1 to compare: the round's held-out test samples{held} lack right or wrong "
                       "solutions; raise per_level (problems per difficulty and round) and re-materialize the round "
                       "from flywheel_samples")
    return Verdict(fresh >= previous - tolerance, f"new PRM F1 {fresh:.3f} vs previous {previous:.3f} on this "
                   f"round's held-out samples (tolerance {tolerance:.2f})")


def policy_holds(metrics: Mapping[str, float], tolerance: float) -> Verdict:
    """The policy's held-out accuracy after the round's RL did not fall more than ``tolerance`` below its start.

    >>> policy_holds({"acc_before": 0.40, "acc_after": 0.25}, 0.10).passed
    False
    """
    before, after = metrics.get("acc_before"), metrics.get("acc_after")
    if before is None or after is None:
        return Verdict(False, "the round's policy entry has no held-out accuracy before and after")
    return Verdict(after >= before - tolerance,
                   f"held-out accuracy {before:.3f} -> {after:.3f} (may fall at most {tolerance:.2f})")


def hacking_in_band(metrics: Mapping[str, float], reference: Mapping[str, float], band: float) -> Verdict:
    """Steps and characters per completion after the round stay within ``band`` (relative) of ``reference``'s
    (round 0's starting policy): a PRM reward that pays per step is hacked by writing more, or fewer, steps.

    >>> hacking_in_band({"steps_after": 12.0, "chars_after": 80.0}, {"steps_before": 7.0, "chars_before": 76.0},
    ...                 0.5).description
    'steps per completion 12.0 vs 7.0 at round 0 (band +-50%): out; characters 80 vs 76: in'
    """
    parts, ok = [], True
    for name, unit, fmt in (("steps", "steps per completion", ".1f"), ("chars", "characters", ".0f")):
        now, ref = metrics.get(f"{name}_after"), reference.get(f"{name}_before")
        if now is None or ref is None or ref <= 0:
            return Verdict(False, f"no {unit} to compare (round entry or round 0's start is missing)")
        inside = abs(now - ref) <= band * ref
        ok &= inside
        parts.append(f"{unit} {now:{fmt}} vs {ref:{fmt}}" + (f" at round 0 (band +-{band:.0%})" if not parts else "")
                     + f": {'in' if inside else 'out'}")
    return Verdict(ok, "; ".join(parts))
