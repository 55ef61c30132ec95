"""The question and the response inside text an RL framework rendered through a chat template.

OpenRLHF's ``--apply_chat_template`` and verl's chat prompts hand the reward the *rendered* prompt
(``<|im_start|>system ... <|im_start|>user\\nQ<|im_end|>\\n<|im_start|>assistant\\n``). A PRM conditioned on that
text instead of the question reads every step as off-policy, and the process reward collapses to 0 without an
error. :func:`user_message` finds the last user turn's content; :func:`assistant_reply` the text after the last
assistant header. Both search literal markers with ``str.rfind``/``str.find`` (linear, no regex), for the common
families (:data:`FAMILIES`) and for markers read off any tokenizer's own template (:func:`markers_from_tokenizer`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ChatMarkers:
    """The literal text a template puts around a user message and before the assistant's reply."""

    name: str
    user_open: str  # directly before a user message's content
    user_close: str  # directly after it
    assistant_open: str  # directly before the assistant's reply (the generation prompt)


# The families whose templates cover most open chat models (read from their tokenizer_config.json templates).
FAMILIES: tuple[ChatMarkers, ...] = (
    ChatMarkers("chatml", "<|im_start|>user\n", "<|im_end|>", "<|im_start|>assistant\n"),  # Qwen, SmolLM2
    ChatMarkers("llama3", "<|start_header_id|>user<|end_header_id|>\n\n", "<|eot_id|>",
                "<|start_header_id|>assistant<|end_header_id|>\n\n"),
    ChatMarkers("gemma", "<start_of_turn>user\n", "<end_of_turn>", "<start_of_turn>model\n"),
    ChatMarkers("phi3", "<|user|>\n", "<|end|>", "<|assistant|>\n"),
    ChatMarkers("zephyr", "<|user|>\n", "</s>", "<|assistant|>\n"),
    ChatMarkers("deepseek", "<｜User｜>", "<｜Assistant｜>", "<｜Assistant｜>"),
    ChatMarkers("mistral", "[INST]", "[/INST]", "[/INST]"),  # Llama-2 and Mistral instruct
)
_LLAMA2_SYSTEM = ("<<SYS>>", "<</SYS>>")  # Llama-2 puts the system prompt inside the first [INST]


def _between(text: str, markers: ChatMarkers) -> str | None:
    at = text.rfind(markers.user_open)
    if at < 0:
        return None
    start = at + len(markers.user_open)
    end = text.find(markers.user_close, start)
    if end < 0:
        return None
    content = text[start:end]
    if markers.name == "mistral" and content.lstrip().startswith(_LLAMA2_SYSTEM[0]):
        cut = content.find(_LLAMA2_SYSTEM[1])
        content = content[cut + len(_LLAMA2_SYSTEM[1]):] if cut >= 0 else content
    return content.strip()


def user_message(text: str, extra: tuple[ChatMarkers, ...] = ()) -> str | None:
    """The last user message of ``text`` rendered by a chat template (``extra`` markers tried first, then
    :data:`FAMILIES`); None when no template's markers are in it (a plain prompt).

    >>> user_message("<|im_start|>system\\nBe brief.<|im_end|>\\n<|im_start|>user\\n12+7 =<|im_end|>\\n"
    ...              "<|im_start|>assistant\\n")
    '12+7 ='
    >>> user_message("12+7 =") is None
    True
    """
    for markers in (*extra, *FAMILIES):
        content = _between(text, markers)
        if content is not None:
            return content
    return None


def assistant_reply(text: str, extra: tuple[ChatMarkers, ...] = ()) -> str | None:
    """What follows the last assistant header in ``text`` (a whole rendered conversation), or None.

    >>> assistant_reply("<|im_start|>user\\nQ<|im_end|>\\n<|im_start|>assistant\\n1+1 = 2<|im_end|>")
    '1+1 = 2<|im_end|>'
    """
    for markers in (*extra, *FAMILIES):
        at = text.rfind(markers.assistant_open)
        if at >= 0 and text.find(markers.user_open) >= 0:
            return text[at + len(markers.assistant_open):]
    return None


_A, _B, _C = "PRMSENTINELFIRSTUSER", "PRMSENTINELASSISTANT", "PRMSENTINELSECONDUSER"


def _common_suffix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return a[len(a) - n:]


def markers_from_tokenizer(tokenizer: Any) -> ChatMarkers | None:
    """The markers of ``tokenizer``'s own chat template, read by rendering sentinel messages; None when it has no
    template or the template does not place messages verbatim.

    The user opener is the text the template puts before a user message both at the start and after an
    assistant turn; the closer and the assistant opener are what follows the user message up to the generation
    prompt's end (the closer is cut where the two-turn rendering's continuation differs).
    """
    try:
        one = tokenizer.apply_chat_template([{"role": "user", "content": _A}], tokenize=False,
                                            add_generation_prompt=True)
        three = tokenizer.apply_chat_template(
            [{"role": "user", "content": _A}, {"role": "assistant", "content": _B},
             {"role": "user", "content": _C}], tokenize=False, add_generation_prompt=False)
    except Exception:  # no template, or one that refuses this conversation
        return None
    if not (isinstance(one, str) and isinstance(three, str) and one.count(_A) == 1 and _B in three and _C in three):
        return None
    head, tail = one.split(_A)
    between = three[three.index(_B) + len(_B): three.index(_C)]
    opener = _common_suffix(head, between)
    after_c = three[three.index(_C) + len(_C):]
    n = 0
    while n < min(len(tail), len(after_c)) and tail[n] == after_c[n]:
        n += 1
    closer, assistant = tail[:n], tail[n:]
    if not opener.strip() or not closer.strip() or not assistant.strip():
        return None
    return ChatMarkers(getattr(tokenizer, "name_or_path", "") or "tokenizer", opener, closer, assistant)
