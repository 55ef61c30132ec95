"""The one prompt builder for every model kind, and the version stored on each ``solutions`` row.

With a chat template (SmolLM2, most instruct models) the question is one user turn plus the assistant
header; without one (the char-level policy, trained on raw text) it is the question and a newline. Everything
here takes a tokenizer; ``prm.models.prompter`` builds a :class:`Prompter` from a model name or folder.
"""

from __future__ import annotations

import hashlib
from typing import Any

# Appended to the question for models without a chat template; the policy is trained on exactly this.
PLAIN_PROMPT_SUFFIX = "\n"
# Bumped whenever the rendering below changes for the same tokenizer.
PROMPT_FORMAT_VERSION = "p1"


def format_prompt(tokenizer: Any, question: str) -> str:
    """The prompt a model with this ``tokenizer`` sees for ``question``.

    >>> class Plain:
    ...     chat_template = None
    >>> format_prompt(Plain(), "12+7-3*2 =")
    '12+7-3*2 =\\n'
    """
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(
            [{"role": "user", "content": question}], tokenize=False, add_generation_prompt=True
        )
    return question + PLAIN_PROMPT_SUFFIX


def prompt_version(tokenizer: Any) -> str:
    """``p1-plain`` or ``p1-chat-<8 hex of the chat template>``: which rendering made a row's prompt.

    >>> class Plain:
    ...     chat_template = None
    >>> prompt_version(Plain())
    'p1-plain'
    """
    template = getattr(tokenizer, "chat_template", None)
    if not template:
        return f"{PROMPT_FORMAT_VERSION}-plain"
    text = template if isinstance(template, str) else repr(template)
    return f"{PROMPT_FORMAT_VERSION}-chat-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


class Prompter:
    """``format_prompt`` bound to one model, with its :func:`prompt_version`; build once, call per question.

    >>> class Plain:
    ...     chat_template = None
    >>> p = Prompter(Plain())
    >>> p("1+1"), p.version
    ('1+1\\n', 'p1-plain')
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.version = prompt_version(self.tokenizer)

    def __call__(self, question: str) -> str:
        return format_prompt(self.tokenizer, question)
