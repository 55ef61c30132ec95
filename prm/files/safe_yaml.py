"""YAML a user wrote (recipes, sidecars, configs), read as plain data with bounded work: a size cap before parsing,
a nesting cap while composing, a cap on nodes after alias expansion (a "billion laughs" file), duplicate keys
refused, and YAML 1.2 booleans (only ``true``/``false``; ``yes``/``no``/``on``/``off`` refused with a hint, since
YAML 1.1 reads them as booleans and 1.2 as text). Every refusal is one :class:`YAMLRefused` line: what, where, what
to do.

>>> load_yaml("sampling: {n: 2}\\nrl: {run: true}")
{'sampling': {'n': 2}, 'rl': {'run': True}}
>>> load_yaml("rl: {run: yes}", origin="r.yaml")
Traceback (most recent call last):
...
prm.files.safe_yaml.YAMLRefused: r.yaml: 'yes' is a boolean in YAML 1.1 but text in YAML 1.2; write true or false ...
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any, ClassVar

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, SequenceNode

MAX_YAML_BYTES = 1 << 20  # a recipe or config is a few KiB; a MiB is another kind of file, refused before parsing
MAX_YAML_DEPTH = 32  # a recipe nests 3 levels; PyYAML's composer recurses, so a deep file hit RecursionError
MAX_YAML_NODES = 100_000  # nodes after alias expansion: 50x a large config, a 10**9-node alias bomb refused early
MAX_INT_DIGITS = 64  # no setting takes a longer integer; int() of a 5,000-digit one raises a non-YAML ValueError

_BOOL = "tag:yaml.org,2002:bool"
_YAML11_BOOL = "tag:prm-pipeline:yaml11-bool"  # a plain yes/no/on/off: refused with a hint, never guessed


class YAMLRefused(ValueError):
    """A YAML file or text that is not read: one line saying what, where and what to do."""


class _Refused(yaml.MarkedYAMLError):
    """A refusal of this module (its problem text already says what to do)."""


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader with the caps above and YAML 1.2 booleans."""

    # PyYAML's resolvers less its YAML 1.1 booleans (1.2's are added below).
    yaml_implicit_resolvers: ClassVar[dict] = {first: [(tag, rx) for tag, rx in rules if tag != _BOOL]
                               for first, rules in yaml.SafeLoader.yaml_implicit_resolvers.items()}

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._sizes: dict[int, int] = {}  # id(node) -> its node count with aliases expanded

    def compose_node(self, parent: Node | None, index: object) -> Node:
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise _Refused(
                    None, None, f"the data nests deeper than {MAX_YAML_DEPTH} levels; a config nests a few levels, "
                    "so flatten it", self.peek_event().start_mark)
            if self.check_event(yaml.AliasEvent):
                target = self.anchors.get(self.peek_event().anchor)
                if target is not None and id(target) not in self._sizes:  # its anchor's node is still open
                    raise _Refused(
                        None, None, "an alias refers to a collection that contains it (a recursive structure); "
                        "replace the alias with the values", self.peek_event().start_mark)
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        self._sizes[id(node)] = size = self._size(node)
        if size > MAX_YAML_NODES:
            raise _Refused(
                None, None, f"aliases expand the data to more than {MAX_YAML_NODES:,} values (an alias bomb?); "
                "write the values out or use fewer aliases", node.start_mark)
        return node

    def _size(self, node: Node) -> int:
        if id(node) in self._sizes:  # an alias: the anchored node again, counted in full each time it is used
            return self._sizes[id(node)]
        if isinstance(node, SequenceNode):
            children = node.value
        elif isinstance(node, MappingNode):
            children = [n for pair in node.value for n in pair]
        else:
            return 1
        return 1 + sum(self._sizes[id(child)] for child in children)  # each child was composed, so counted

    def construct_mapping(self, node: Node, deep: bool = False) -> dict:
        if isinstance(node, MappingNode):
            seen: set[object] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                except TypeError:
                    continue  # an unhashable key: the base constructor refuses it with its own message
                if duplicate:
                    raise _Refused(None, None, f"the key {key!r:.60} appears twice in one mapping (YAML "
                                           "would keep only the last); keep one", key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _yaml12_bool(loader: _Loader, node: Node) -> bool:
    return loader.construct_scalar(node).lower() == "true"


def _refuse_yaml11_bool(loader: _Loader, node: Node) -> None:
    raise _Refused(None, None, f"{node.value!r} is a boolean in YAML 1.1 but text in YAML 1.2; write true "
                           f"or false for a switch, or quote it ('{node.value}') for text", node.start_mark)


def _bounded_int(loader: _Loader, node: Node) -> int:
    if len(str(node.value)) > MAX_INT_DIGITS:
        raise _Refused(None, None, f"an integer of {len(node.value)} characters is longer than any setting "
                               f"takes (at most {MAX_INT_DIGITS}); fix the number", node.start_mark)
    return SafeConstructor.construct_yaml_int(loader, node)


_Loader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_Loader.add_implicit_resolver(_YAML11_BOOL, re.compile(r"^(?:yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF)$"),
                              list("yYnNoO"))
_Loader.add_constructor(_BOOL, _yaml12_bool)
_Loader.add_constructor(_YAML11_BOOL, _refuse_yaml11_bool)
_Loader.add_constructor("tag:yaml.org,2002:int", _bounded_int)


def _where(exc: yaml.YAMLError) -> str:
    """A PyYAML error as one line: the problem and its line and column (1-based)."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "invalid YAML"
        if exc.context and exc.problem and exc.context not in exc.problem:
            what = f"{exc.problem} ({exc.context})"
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        return f"{what}{at}"
    if isinstance(exc, yaml.reader.ReaderError):
        return f"{exc.reason} (#x{exc.character:04x} at character {exc.position + 1}); remove it"
    return str(exc)


def load_yaml(text: str | bytes, *, origin: str = "YAML", max_bytes: int = MAX_YAML_BYTES) -> Any:
    """The data in ``text`` (UTF-8 bytes or str), or a :class:`YAMLRefused` line that starts with ``origin``."""
    size = len(text.encode("utf-8", "surrogatepass")) if isinstance(text, str) else len(text)
    if size > max_bytes:
        raise YAMLRefused(f"{origin}: larger than the {max_bytes:,} bytes a config may hold; is it the right "
                          "file?")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise YAMLRefused(f"{origin}: not UTF-8 text (byte 0x{text[exc.start]:02x} at offset {exc.start}); save "
                              "it as UTF-8") from None
    loader = None
    try:
        loader = _Loader(text)  # the reader refuses control characters here
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        hint = "; fix the YAML" if isinstance(exc, yaml.MarkedYAMLError) and not isinstance(exc, _Refused) else ""
        raise YAMLRefused(_one_line(f"{origin}: {_where(exc)}{hint}")) from None
    except (ValueError, OverflowError) as exc:  # a scalar PyYAML's own constructors cannot convert
        raise YAMLRefused(_one_line(f"{origin}: {exc}; fix the value")) from None
    finally:
        if loader is not None:
            loader.dispose()


def read_yaml(path: str | Path, *, origin: str | None = None, max_bytes: int = MAX_YAML_BYTES) -> Any:
    """The data in the YAML file ``path``: FileNotFoundError when it is absent, :class:`YAMLRefused` for anything
    else that is not a readable regular file of UTF-8 YAML (a directory, a FIFO, a device, a symlink loop)."""
    origin = origin or str(path)
    try:
        # O_NONBLOCK: opening a FIFO (or a symlink to one) must not wait for a writer; a regular file ignores it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise YAMLRefused(f"{origin}: cannot be opened ({exc.strerror or exc}); give a readable YAML file") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file (a FIFO, socket or device)"
            raise YAMLRefused(f"{origin}: is {kind}; give a YAML file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise YAMLRefused(f"{origin}: cannot be read ({exc.strerror or exc}); give a readable YAML file") from None
    finally:
        os.close(fd)
    return load_yaml(data, origin=origin, max_bytes=max_bytes)
