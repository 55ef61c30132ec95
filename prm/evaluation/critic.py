"""A generative critic on ProcessBench, as the paper runs critics.

ProcessBench's critique prompt (:data:`CRITIQUE_TEMPLATE`, ``code/templates/critique_template.txt``, verbatim) as one
user turn, greedy decoding, and the index read as ``code/run_eval.py`` reads it: ``int()`` of the last
``\\boxed{...}``, None (a miss) when there is none or it is no integer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from prm.format import format_prompt
from prm.generation import GenerationBackend, GenerationRequest

CRITIC_MAX_TOKENS = 8192  # run_eval.py's budget per critique (32768 for QwQ)
# A longer \boxed{...} is read as no index without calling int(): Python's int() refuses over 4300 digits anyway
# (sys.int_info.default_max_str_digits), and a number that long could only miss the label.
MAX_BOX_CHARS = 5000
# code/templates/critique_template.txt of QwenLM/ProcessBench (commit e802463), read().strip() as run_eval.py does;
# prm.labeling.judge.JUDGE_TEMPLATE is built from it, {tagged_response} named {paragraphs}.
CRITIQUE_TEMPLATE = (
    "The following is a math problem and a solution (split into paragraphs, enclosed with tags and indexed "
    "from 0):\n\n[Math Problem]\n\n{problem}\n\n[Solution]\n\n{tagged_response}\n\n"
    "Your task is to review and critique the solution paragraph by paragraph. Once you identify an error in a "
    "paragraph, return the index of the paragraph where the earliest error occurs. Otherwise, return the index "
    "of -1 (which typically denotes \"not found\").\n\nPlease put your final answer (i.e., the index) in \\boxed{{}}."
)
_BOX = "\\boxed{"


# --- reading a critique --------------------------------------------------------------------------------------------

def extract_boxed(text: str) -> str | None:
    """run_eval.py's ``extract_answer``: the last match of ``\\\\boxed\\{([^}]*)\\}``, stripped; None when none.

    A linear scan with the matches ``re.findall`` makes (left to right, each running to the first ``}``): the
    regex itself rescans the rest of the text from every unclosed ``\\boxed{``, quadratic on hostile output.

    >>> extract_boxed("so \\\\boxed{2} ... \\\\boxed{ -1 }"), extract_boxed("\\\\boxed{1"), extract_boxed("none")
    ('-1', None, None)
    >>> extract_boxed("\\\\boxed{a \\\\boxed{3}")  # [^}]* runs over the second \\boxed{, as the regex does
    'a \\\\boxed{3'
    """
    found, pos = None, 0
    while (start := text.find(_BOX, pos)) >= 0:
        end = text.find("}", start + len(_BOX))
        if end < 0:
            break  # no later \boxed{ has a closing brace either
        found, pos = text[start + len(_BOX):end], end + 1
    return None if found is None else found.strip()


def critique_index(text: str | None) -> int | None:
    """The earliest-error index a critique states: ``int()`` of :func:`extract_boxed`, None when that fails.

    >>> critique_index("Paragraph 2 is wrong. \\\\boxed{2}"), critique_index("\\\\boxed{-1}")
    (2, -1)
    >>> print(critique_index("\\\\boxed{}"), critique_index("\\\\boxed{1.5}"), critique_index("\\\\boxed{2"))
    None None None
    """
    boxed = extract_boxed(text) if isinstance(text, str) else None
    if boxed is None or len(boxed) > MAX_BOX_CHARS:
        return None
    try:
        return int(boxed)
    except ValueError:
        return None


def critique_prompt(problem: str, steps: Sequence[str], template: str = CRITIQUE_TEMPLATE) -> str:
    """run_eval.py's ``prepare_input_boxed`` user message: the steps as ``<paragraph_i>`` blocks, text unchanged.

    >>> print(critique_prompt("1+2*3?", ["2*3 = 6", "1+6 = 7"]).split("[Solution]")[1].split("Your task")[0].strip())
    <paragraph_0>
    2*3 = 6
    </paragraph_0>
    <BLANKLINE>
    <paragraph_1>
    1+6 = 7
    </paragraph_1>
    """
    tagged_response = ""
    for sdx, step in enumerate(steps):
        tagged_response += f"<paragraph_{sdx}>\n{step}\n</paragraph_{sdx}>\n\n"
    return template.format(problem=problem, tagged_response=tagged_response.strip())


# --- critics -------------------------------------------------------------------------------------------------------

@runtime_checkable
class Critic(Protocol):
    """Anything that names the earliest wrong step of solutions: -1 for none, None when it gives no index."""

    name: str

    def first_errors(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[int | None]: ...


@dataclass
class CriticStats:
    """How a critic's answers went: requests that failed, critiques cut at the budget, critiques without an index."""

    failed: int = 0
    cut: int = 0
    no_index: int = 0
    errors: list[str] = field(default_factory=list)  # the first few failures' messages


class GenerationCritic:
    """A chat model behind a :class:`prm.generation.GenerationBackend` as a ProcessBench critic: the critique prompt
    through the model's chat template (``format_prompt``: one user turn, as run_eval.py's ``apply_chat_template``),
    one greedy sample of at most ``max_tokens`` (fewer where the context would overflow), :func:`critique_index`."""

    def __init__(self, backend: GenerationBackend, tokenizer: Any, *, name: str,
                 max_tokens: int = CRITIC_MAX_TOKENS, seed: int = 0) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens={max_tokens} leaves no room for the answer; run_eval.py uses 8192")
        self.backend, self.tokenizer, self.name = backend, tokenizer, name
        self.max_tokens, self.seed = max_tokens, seed
        self.stats = CriticStats()

    def prompt(self, problem: str, steps: Sequence[str]) -> str:
        """The text the model is given for one solution."""
        return format_prompt(self.tokenizer, critique_prompt(problem, steps))

    def _budget(self, prompt: str, context: int) -> int:
        """``max_tokens``, lowered so prompt + critique fit the served context (unknown context: unchanged)."""
        if context <= 0 or not callable(self.tokenizer):
            return self.max_tokens
        return min(self.max_tokens, context - len(self.tokenizer(prompt)["input_ids"]))

    def first_errors(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[int | None]:
        """One greedy critique per ``(problem, steps)``; its index, None where none could be read."""
        prompts = [self.prompt(problem, steps) for problem, steps in items]
        context = int(getattr(self.backend.info, "max_model_len", 0) or 0) if prompts else 0
        budgets = [self._budget(p, context) for p in prompts]
        runnable = [i for i, b in enumerate(budgets) if b >= 1]
        stats = CriticStats()
        for i in sorted(set(range(len(prompts))) - set(runnable)):
            stats.failed += 1
            stats.errors.append(f"row {i}: the prompt fills the model's context of {context} tokens")
        requests = [GenerationRequest(prompt=prompts[i], n=1, max_tokens=budgets[i], temperature=0.0, top_p=1.0,
                                      seed=self.seed) for i in runnable]
        out: list[int | None] = [None] * len(prompts)
        for i, row in zip(runnable, self.backend.generate(requests) if requests else [], strict=True):
            if not row.ok or not row.texts:
                stats.failed += 1
                stats.errors.append(f"row {i}: {row.error}")
                continue
            stats.cut += row.finish_reasons[0] == "length"
            out[i] = critique_index(row.texts[0])
            stats.no_index += out[i] is None
        stats.errors = stats.errors[:5]
        self.stats = stats
        return out




__all__ = ["CRITIC_MAX_TOKENS", "CRITIQUE_TEMPLATE", "MAX_BOX_CHARS", "Critic", "CriticStats", "GenerationCritic",
           "critique_index", "critique_prompt", "extract_boxed"]
