"""Verifiers: answer extraction and grading, formal step checks. Never imports dagster."""

from verifiers.extract import extract_answer

__all__ = ["extract_answer"]
