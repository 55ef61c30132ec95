"""Values every export file can hold: text a UTF-8 file can encode, and numbers strict JSON can hold.

A lone surrogate (U+D800-U+DFFF: half of a UTF-16 pair, e.g. from bytes decoded with ``surrogateescape`` or a
JSON ``"\\ud800"`` escape) has no UTF-8 encoding, so a file holding one cannot be written. Exports replace each
with U+FFFD, the Unicode replacement character, and warn naming the rows: the rest of the row is still worth
exporting, and the warning says where the text lost a character.

JSON has no NaN or infinity (RFC 8259, section 6); Python's ``json`` writes them as the bare words ``NaN`` and
``Infinity``, which ``jq``, JavaScript and most parsers refuse. JSON exports (and the PRM card) write ``null``
in their place: :func:`dumps_strict` converts, then dumps with ``allow_nan=False`` so nothing else slips by.
Labels never get here as NaN: the row checks refuse them first.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

REPLACEMENT = "\ufffd"  # U+FFFD REPLACEMENT CHARACTER: Unicode's mark for a character that could not be kept
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_ROWS_NAMED = 5  # a warning lists this many row indices, then a count


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, Mapping):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_replace_surrogates(v) for v in value]
    return value


def lone_surrogate_at(text: str) -> int | None:
    """The index of the first lone surrogate in ``text`` (a character no UTF-8 text can hold), or None.

    >>> lone_surrogate_at("ab\\ud800c"), lone_surrogate_at("ки")
    (2, None)
    """
    found = _LONE_SURROGATE.search(text)
    return found.start() if found else None


def utf8_rows(rows: Iterable[Mapping[str, Any]], where: str = "rows") -> list[dict[str, Any]]:
    """``rows`` with every lone surrogate in a string (keys and nested lists too) replaced by U+FFFD; warns once
    naming the rows changed (``where``: what the warning calls them, e.g. ``"out.jsonl rows"``).

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     utf8_rows([{"prompt": "q\\ud800", "labels": [True]}])
    [{'prompt': 'q\\ufffd', 'labels': [True]}]
    """
    out, changed = [], []
    for i, row in enumerate(rows):
        clean = _replace_surrogates(row)
        if clean != row:
            changed.append(i)
        out.append(clean)
    if changed:
        named = ", ".join(map(str, changed[:_ROWS_NAMED])) + (f" and {len(changed) - _ROWS_NAMED} more"
                                                              if len(changed) > _ROWS_NAMED else "")
        warnings.warn(f"{where} {named}: lone surrogates (U+D800-U+DFFF, which UTF-8 cannot encode) replaced by "
                      "U+FFFD; fix the text where it was decoded to keep those characters", UserWarning, stacklevel=3)
    return out


def json_safe(value: Any) -> Any:
    """``value`` with every NaN or infinite float (in nested mappings and lists too) replaced by None.

    >>> json_safe({"auc": float("nan"), "loss": [0.5, float("inf")]})
    {'auc': None, 'loss': [0.5, None]}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def dumps_strict(value: Any, **kwargs: Any) -> str:
    """Strict JSON of ``value`` (UTF-8 text kept readable): non-finite floats written as null.

    >>> dumps_strict({"x": float("nan"), "tag": "ки"})
    '{"x": null, "tag": "ки"}'
    """
    return json.dumps(json_safe(value), ensure_ascii=False, allow_nan=False, **kwargs)
