"""The typed result every verifier returns (steps and final answers): verifiers never raise on model text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeGuard

Status = Literal["correct", "incorrect", "unverifiable"]
STATUSES: tuple[Status, ...] = ("correct", "incorrect", "unverifiable")


@dataclass(frozen=True)
class StepVerdict:
    """Outcome of checking one step (or grading one final answer).

    ``detail`` names the failing equation (``incorrect``) or the reason (``unverifiable``);
    ``equations`` lists the claims that were checked, normalized, in order.

    >>> StepVerdict("unverifiable", "no equation found").is_correct
    False
    """

    status: Status
    detail: str = ""
    equations: tuple[str, ...] = ()

    @property
    def is_correct(self) -> bool:
        return self.status == "correct"

    @staticmethod
    def unverifiable(reason: str) -> StepVerdict:
        """Shorthand for a verdict that could not be reached, with its reason."""
        return StepVerdict("unverifiable", reason)


def has_text(step_text: object) -> TypeGuard[str]:
    """True for a string with a non-blank character; every checker calls anything else an ``"empty step"``.

    >>> has_text("1+1 = 2"), has_text("  "), has_text(None)
    (True, False, False)
    """
    return isinstance(step_text, str) and bool(step_text.strip())
