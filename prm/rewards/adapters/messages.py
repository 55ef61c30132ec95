"""Plain text out of what frameworks pass a reward function: strings or conversations (lists of messages)."""

from __future__ import annotations

from typing import Any

from prm.format import PLAIN_PROMPT_SUFFIX
from prm.rewards.adapters.chat_template import ChatMarkers, user_message


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


def problem_text(prompt: Any, markers: tuple[ChatMarkers, ...] = ()) -> str:
    """The problem a prompt asks: a conversation's last user message; in a prompt rendered through a chat
    template (``markers``, then the common families of :mod:`~prm.rewards.adapters.chat_template`), the last
    user turn's content; else the plain prompt without the suffix :func:`prm.format.format_prompt` adds for
    models without a chat template (the PRM adds it back).

    >>> problem_text("12+7 =\\n"), problem_text([{"role": "system", "content": "Be brief."},
    ...                                          {"role": "user", "content": "12+7 ="}])
    ('12+7 =', '12+7 =')
    >>> problem_text("<|begin_of_text|><|start_header_id|>user<|end_header_id|>\\n\\n12+7 =<|eot_id|>"
    ...              "<|start_header_id|>assistant<|end_header_id|>\\n\\n")
    '12+7 ='
    """
    if isinstance(prompt, str):
        inner = user_message(prompt, markers)
        if inner is not None:
            return inner
        return prompt[: -len(PLAIN_PROMPT_SUFFIX)] if prompt.endswith(PLAIN_PROMPT_SUFFIX) else prompt
    users = [m for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
    return _content(users[-1]) if users else "\n".join(_content(m) for m in prompt)


# Keys of a dict-shaped label that hold the gold answer, tried in order (verl's reward_model dicts hold
# ``ground_truth``; datasets name it ``answer``, ``label``, ``gold``, ``target`` or ``solution``).
LABEL_KEYS = ("ground_truth", "answer", "label", "gold", "target", "solution")


def label_answer(label: Any) -> tuple[str | None, str | None]:
    """``(gold answer, error)`` of a label as frameworks send it: a string or number as is, a one-element list
    (or tuple, or numpy array), a dict with one of :data:`LABEL_KEYS`. ``(None, None)`` is no label; an unusable
    label is ``(None, why)``, for the caller to report per sample instead of failing the request.

    >>> label_answer(" 19 "), label_answer(["19"]), label_answer({"answer": 19}), label_answer(None)
    (('19', None), ('19', None), ('19', None), (None, None))
    >>> label_answer(["19", "20"])[1]
    'a label with 2 entries is ambiguous; send one gold answer per sample'
    """
    for _ in range(4):  # a list of a dict of a list: a few levels, never a deep walk of hostile input
        if label is None or isinstance(label, str):
            text = (label or "").strip()
            return (text or None), None
        if isinstance(label, bool):
            return None, f"a boolean label ({label}) is not an answer; send the gold answer"
        if isinstance(label, int | float):
            if label != label or label in (float("inf"), float("-inf")):
                return None, f"a non-finite label ({label}) is not an answer"
            return str(label), None
        if isinstance(label, dict):
            key = next((k for k in LABEL_KEYS if k in label), None)
            if key is None:
                return None, (f"a dict label needs one of the keys {LABEL_KEYS}; got {sorted(map(str, label))[:6]}")
            label = label[key]
            continue
        if hasattr(label, "tolist") and not isinstance(label, str | bytes):
            label = label.tolist()  # a numpy array or scalar from a parquet column
            continue
        if isinstance(label, list | tuple):
            if len(label) > 1:
                return None, f"a label with {len(label)} entries is ambiguous; send one gold answer per sample"
            label = label[0] if label else None
            continue
        return None, f"a label of type {type(label).__name__} is not an answer; send a string"
    return None, "a label nested more than 3 levels deep is not an answer; send a string"
