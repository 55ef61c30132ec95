"""Verifiers: answer extraction and grading, formal step checks. Never imports dagster."""

from verifiers.answers import grade_answer, grade_answers, grade_verdicts
from verifiers.arithmetic import check_arithmetic_step
from verifiers.expression import ExpressionError, PrecedenceParser, Token, tokenize
from verifiers.extract import extract_answer, is_answer_line
from verifiers.logic import LogicParseError, check_logic_step, format_formula, parse_formula, parse_step
from verifiers.pool import PoolConfig, VerifierPool, check_steps, refuse_reimported_main
from verifiers.reference import Reference, ReferenceVerdict, build_reference, locate_first_error
from verifiers.verdict import StepVerdict

__all__ = [
    "ExpressionError",
    "LogicParseError",
    "PoolConfig",
    "PrecedenceParser",
    "Reference",
    "ReferenceVerdict",
    "StepVerdict",
    "Token",
    "VerifierPool",
    "build_reference",
    "check_arithmetic_step",
    "check_logic_step",
    "check_steps",
    "extract_answer",
    "format_formula",
    "grade_answer",
    "grade_answers",
    "grade_verdicts",
    "is_answer_line",
    "locate_first_error",
    "parse_formula",
    "parse_step",
    "refuse_reimported_main",
    "tokenize",
]
