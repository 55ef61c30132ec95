"""Fixed limits of the verifiers, each with the reason it has the value it has.

Model text is hostile: every limit below bounds the work one call can do, so the in-process
arithmetic path is provably bounded and the pool's timeout is a second line of defence.
"""

from __future__ import annotations

# Steps longer than this are not a single reasoning step; GSM8K's longest solution line is ~400 chars.
MAX_STEP_CHARS = 20_000
# Digits in one number literal: GSM8K's largest number has 10 digits; 1 MB of digits must not be parsed.
MAX_NUMBER_DIGITS = 100
# Bits of any numerator/denominator during evaluation (~1,200 decimal digits): keeps each Fraction
# operation in microseconds while leaving room for MATH-style values such as 2^100.
MAX_VALUE_BITS = 4_096
# Largest integer exponent accepted in a^b; 2^2^2^2^2^2 must stop long before it allocates.
MAX_EXPONENT = 4_096
# Bracket nesting depth: the parser recurses once per level and must never reach Python's limit.
MAX_NESTING_DEPTH = 64
# Tokens in one step: with the limits above, this bounds one in-process check to milliseconds.
MAX_TOKENS = 4_000
# Equations read from one step; a step asserting more is a table, not a step.
MAX_EQUATIONS = 64

# Default per-call wall-clock limits (seconds) for calls run through the worker pool.
DEFAULT_STEP_TIMEOUT_S = 2.0  # arithmetic/logic checks take microseconds to milliseconds
DEFAULT_GRADE_TIMEOUT_S = 5.0  # math_verify's own default timeout is 5 s per parse/verify
# Z3 solver timeout (milliseconds), set through solver params; below the pool timeout so Z3 answers
# "unknown" first and the worker survives.
Z3_TIMEOUT_MS = 1_000
# Atoms and premises of one logic step: FoVer-style steps have a handful of premises.
MAX_LOGIC_ATOMS = 64

# Plain-number fast path of answer grading: relative tolerance for non-integers, as math_verify's
# default float_rounding=6 (GSM8K answers are integers and compare exactly).
NUMBER_REL_TOL = 1e-6
# Answers longer than this are not parsed by math_verify (a final answer is short).
MAX_ANSWER_CHARS = 2_000
