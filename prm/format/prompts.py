"""The one prompt builder for every model kind, and the version stored on each ``solutions`` row.

With a chat template (SmolLM2, most instruct models) the question is one user turn plus the assistant
header; without one (the char-level policy, trained on raw text) it is the question and a newline. A
:class:`PromptTemplate` adds a system prompt and an answer-format instruction (per recipe); the default template
adds nothing, so the embedded policy's prompts and prompt version stay as they were. Everything here takes a
tokenizer; ``prm.models.prompter`` builds a :class:`Prompter` from a model name or folder.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

# Appended to the question for models without a chat template; the policy is trained on exactly this.
PLAIN_PROMPT_SUFFIX = "\n"
# Bumped whenever the rendering below changes for the same tokenizer and template.
PROMPT_FORMAT_VERSION = "p1"
# Between the question and the instruction, and between a system prompt and the question without a chat template.
INSTRUCTION_SEPARATOR = "\n\n"
# HF search-and-learn's system prompt (recipes/*: Qwen2.5-Math, Llama-3.2 instruct): the answer line it asks for is
# one the extractor reads (``\boxed{}``), and "step-by-step" with blank lines gives the paragraph steps
# ``prm.format.segment`` cuts on.
SEARCH_AND_LEARN_SYSTEM_PROMPT = (
    "Solve the following math problem efficiently and clearly:\n\n"
    "- For simple problems (2 steps or fewer):\nProvide a concise solution with minimal explanation.\n\n"
    "- For complex problems (3 steps or more):\nUse this step-by-step format:\n\n"
    "## Step 1: [Concise description]\n[Brief explanation and calculations]\n\n"
    "## Step 2: [Concise description]\n[Brief explanation and calculations]\n\n...\n\n"
    "Regardless of the approach, always conclude with:\n\n"
    "Therefore, the final answer is: $\\boxed{answer}$. I hope it is correct.\n\n"
    "Where [answer] is just the final number or expression that solves the problem."
)


@dataclass(frozen=True)
class PromptTemplate:
    """What goes around a question: a system prompt and an answer-format instruction appended to the question.

    >>> PromptTemplate().is_default
    True
    >>> PromptTemplate(instruction="End with 'The answer is: X'.").digest()
    'd1701a62'
    >>> PromptTemplate(system_prompt="")
    Traceback (most recent call last):
    ...
    ValueError: system_prompt is empty; leave it None for no system prompt, or write the text
    """

    system_prompt: str | None = None  # a system turn (chat models), or a first paragraph (plain models); None: none
    instruction: str | None = None  # appended to the question after a blank line; None: the question alone

    def __post_init__(self) -> None:
        for name in ("system_prompt", "instruction"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ValueError(f"{name} is empty; leave it None for no {name.replace('_', ' ')}, or write the text")

    @property
    def is_default(self) -> bool:
        """Whether the template adds nothing (the question goes in bare)."""
        return self.system_prompt is None and self.instruction is None

    def digest(self) -> str:
        """8 hex characters naming the template's text (part of the prompt version)."""
        text = json.dumps([self.system_prompt, self.instruction])
        return hashlib.sha256(text.encode()).hexdigest()[:8]

    def question(self, question: str) -> str:
        """The user turn: the question, then the instruction after a blank line when there is one."""
        return question if self.instruction is None else f"{question}{INSTRUCTION_SEPARATOR}{self.instruction}"


DEFAULT_TEMPLATE = PromptTemplate()


def format_prompt(tokenizer: Any, question: str, template: PromptTemplate = DEFAULT_TEMPLATE) -> str:
    """The prompt a model with this ``tokenizer`` sees for ``question`` under ``template``.

    >>> class Plain:
    ...     chat_template = None
    >>> format_prompt(Plain(), "12+7-3*2 =")
    '12+7-3*2 =\\n'
    >>> format_prompt(Plain(), "2+2?", PromptTemplate(system_prompt="Be brief.", instruction="Answer: X"))
    'Be brief.\\n\\n2+2?\\n\\nAnswer: X\\n'
    """
    user = template.question(question)
    if getattr(tokenizer, "chat_template", None):
        system = [] if template.system_prompt is None else [{"role": "system", "content": template.system_prompt}]
        return tokenizer.apply_chat_template(
            [*system, {"role": "user", "content": user}], tokenize=False, add_generation_prompt=True
        )
    head = "" if template.system_prompt is None else template.system_prompt + INSTRUCTION_SEPARATOR
    return head + user + PLAIN_PROMPT_SUFFIX


def prompt_version(tokenizer: Any, template: PromptTemplate = DEFAULT_TEMPLATE) -> str:
    """``p1-plain`` or ``p1-chat-<8 hex of the chat template>``, plus ``-t<8 hex of the template>`` when the
    template adds text: which rendering made a row's prompt.

    >>> class Plain:
    ...     chat_template = None
    >>> prompt_version(Plain())
    'p1-plain'
    >>> prompt_version(Plain(), PromptTemplate(instruction="End with 'The answer is: X'."))
    'p1-plain-td1701a62'
    """
    chat = getattr(tokenizer, "chat_template", None)
    if not chat:
        version = f"{PROMPT_FORMAT_VERSION}-plain"
    else:
        text = chat if isinstance(chat, str) else repr(chat)
        version = f"{PROMPT_FORMAT_VERSION}-chat-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
    return version if template.is_default else f"{version}-t{template.digest()}"


class Prompter:
    """``format_prompt`` bound to one model and template, with its :func:`prompt_version`; build once, call per
    question.

    >>> class Plain:
    ...     chat_template = None
    >>> p = Prompter(Plain())
    >>> p("1+1"), p.version
    ('1+1\\n', 'p1-plain')
    """

    def __init__(self, tokenizer: Any, template: PromptTemplate = DEFAULT_TEMPLATE) -> None:
        self.tokenizer = tokenizer
        self.template = template
        self.version = prompt_version(self.tokenizer, template)

    def __call__(self, question: str) -> str:
        return format_prompt(self.tokenizer, question, self.template)
