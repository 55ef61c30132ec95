"""Fixed limits of the verifiers, each with the reason it has the value it has.

Model text is hostile: every limit below bounds the work one call can do, so the in-process
arithmetic path is provably bounded and the pool's timeout is a second line of defence.
"""

from __future__ import annotations

from fractions import Fraction

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

# A decimal with at least this many significant digits is a machine's rendering of a double (Python's
# repr writes 16-17 for a non-terminating value, %.15g writes 15), not a person's rounding.
DOUBLE_MIN_DIGITS = 15
# How far such a rendering may sit from the exact value, relative to the largest magnitude in the
# computation: each float operation or decimal input adds up to half a unit of roundoff (2^-53), and a
# calculator line has a handful; 2^-48 is 32 half-units. A slip changes a digit that carries the value
# (relative change >= 1e-12 in the first 12 digits), so it stays far outside.
DOUBLE_REL_TOL = Fraction(1, 2**48)

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
# extract_answer reads only the last this-many characters of a solution: final answers sit at the end,
# and the cut bounds one in-process call (~1 ms on 20 kB) whatever a model emits before it.
MAX_SCAN_CHARS = 20_000
