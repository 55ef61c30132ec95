"""Files every stage writes and reads: atomic writes (a reader never sees half a file), JSONL and strict JSON, and
users' YAML read with bounded work (recipes, sidecars, configs).

The bottom layer of ``prm``: it imports no other package of the project, so any stage can use it.
"""

from prm.files.atomic import atomic_write, atomic_write_dir, atomic_write_text
from prm.files.encodable import dumps_strict, json_safe, lone_surrogate_at, utf8_rows
from prm.files.jsonl import json_kind, json_line, read_jsonl, read_jsonl_lines, write_jsonl
from prm.files.safe_yaml import YAMLRefused, load_yaml, read_yaml

__all__ = [
    "YAMLRefused",
    "atomic_write",
    "atomic_write_dir",
    "atomic_write_text",
    "dumps_strict",
    "json_kind",
    "json_line",
    "json_safe",
    "load_yaml",
    "lone_surrogate_at",
    "read_jsonl",
    "read_jsonl_lines",
    "read_yaml",
    "utf8_rows",
    "write_jsonl",
]
