"""Verifiers: answer extraction and grading, formal step checks. Never imports dagster."""

from verifiers.answers import grade_answer, grade_answers, grade_verdicts
from verifiers.arithmetic import check_arithmetic_step
from verifiers.extract import extract_answer
from verifiers.logic import check_logic_step
from verifiers.pool import PoolConfig, VerifierPool, check_steps
from verifiers.verdict import StepVerdict

__all__ = [
    "PoolConfig",
    "StepVerdict",
    "VerifierPool",
    "check_arithmetic_step",
    "check_logic_step",
    "check_steps",
    "extract_answer",
    "grade_answer",
    "grade_answers",
    "grade_verdicts",
]
