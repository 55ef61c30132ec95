"""Plain text out of what frameworks pass a reward function: strings or conversations (lists of messages)."""

from __future__ import annotations

from typing import Any

from prm.format import PLAIN_PROMPT_SUFFIX


def _content(message: Any) -> str:
    content = message.get("content", "") if isinstance(message, dict) else message
    if isinstance(content, list):  # multimodal parts: [{"type": "text", "text": ...}, {"type": "image"}, ...]
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return "" if content is None else str(content)


def completion_text(completion: Any) -> str:
    """The text a model wrote: a string as is; for a conversation (TRL's conversational format), its
    assistant messages joined by newlines.

    >>> completion_text("1+1 = 2"), completion_text([{"role": "assistant", "content": "1+1 = 2"}])
    ('1+1 = 2', '1+1 = 2')
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return _content(completion)
    return "\n".join(_content(m) for m in completion if not isinstance(m, dict) or m.get("role", "assistant")
                     == "assistant")


def problem_text(prompt: Any) -> str:
    """The problem a prompt asks: a conversation's last user message, or a plain prompt without the suffix
    :func:`prm.format.format_prompt` adds for models without a chat template (the PRM adds it back).

    A prompt already rendered through a chat template cannot be inverted: pass the raw problem instead
    (a ``question`` dataset column for TRL, ``extra_info["question"]`` for verl).

    >>> problem_text("12+7 =\\n"), problem_text([{"role": "system", "content": "Be brief."},
    ...                                          {"role": "user", "content": "12+7 ="}])
    ('12+7 =', '12+7 =')
    """
    if isinstance(prompt, str):
        return prompt[: -len(PLAIN_PROMPT_SUFFIX)] if prompt.endswith(PLAIN_PROMPT_SUFFIX) else prompt
    users = [m for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
    return _content(users[-1]) if users else "\n".join(_content(m) for m in prompt)
