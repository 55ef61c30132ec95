"""prm.files.safe_yaml: users' YAML is read with bounded work, and every refusal is one line that says what, where
and what to do (issue 52 item 1). Counts, never clocks: each hostile file is refused before it expands."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from prm.files import YAMLRefused, load_yaml, read_yaml
from prm.files.safe_yaml import MAX_YAML_BYTES, MAX_YAML_DEPTH, MAX_YAML_NODES

# Nine levels of nine aliases: 9**9 (387 million) strings once expanded; PyYAML's safe_load builds it shared, and
# the first repr or copy of it ran out of memory.
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))


@pytest.mark.parametrize(("text", "says"), [
    ("[" * 100_000, f"nests deeper than {MAX_YAML_DEPTH} levels"),
    ("".join("  " * i + "a:\n" for i in range(200)), f"nests deeper than {MAX_YAML_DEPTH} levels"),
    (BOMB, f"aliases expand the data to more than {MAX_YAML_NODES:,} values"),
    ("&a [*a]", "a recursive structure"),
    ("a: 1\na: 2\n", "the key 'a' appears twice in one mapping"),
    ("s: {n: 1, n: 2}", "the key 'n' appears twice"),
    ("run: yes", "'yes' is a boolean in YAML 1.1 but text in YAML 1.2; write true or false"),
    ("run: Off", "'Off' is a boolean in YAML 1.1"),
    ("n: " + "9" * 5000, "an integer of 5000 characters"),
    ("a: 1\n---\nb: 2\n", "expected a single document"),
    ("!!python/object/apply:os.system [ls]", "could not determine a constructor"),
    ("a: \x00", "special characters are not allowed"),
    ("a: [1, 2", "line 1"),
    (b"a: \xff\xfe", "not UTF-8 text (byte 0xff at offset 3); save it as UTF-8"),
    ("x" * (MAX_YAML_BYTES + 1), f"larger than the {MAX_YAML_BYTES:,} bytes"),
])
def test_hostile_yaml_is_refused_in_one_line(text: str | bytes, says: str) -> None:
    with pytest.raises(YAMLRefused) as info:
        load_yaml(text, origin="r.yaml")
    message = str(info.value)
    assert message.startswith("r.yaml: ") and says in message, message
    assert "\n" not in message and len(message) <= 300


@pytest.mark.parametrize(("text", "value"), [
    ("run: true\nother: False", {"run": True, "other": False}),
    ("run: 'yes'\nword: no_thing", {"run": "yes", "word": "no_thing"}),  # quoted, or not a YAML 1.1 boolean
    ("base: &b {x: 1}\nd: {<<: *b, y: 2}", {"base": {"x": 1}, "d": {"x": 1, "y": 2}}),  # anchors within the cap
    ("n: 10000000000000000000000000000000", {"n": 10**31}),  # a large number is the validators' to bound
    ("", None),
])
def test_plain_yaml_reads_as_yaml_1_2(text: str, value: object) -> None:
    assert load_yaml(text) == value


def test_a_file_that_is_no_regular_file_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)  # opening it for reading would wait for a writer forever
    (tmp_path / "loop.yaml").symlink_to(tmp_path / "loop.yaml")
    (tmp_path / "dir.yaml").mkdir()
    (tmp_path / "ok.yaml").write_text("a: 1\n")
    (tmp_path / "link.yaml").symlink_to(tmp_path / "ok.yaml")
    for name, says in (("fifo.yaml", "not a regular file"), ("loop.yaml", "cannot be opened"),
                       ("dir.yaml", "is a directory")):
        with pytest.raises(YAMLRefused, match=says):
            read_yaml(tmp_path / name)
    assert read_yaml(tmp_path / "link.yaml") == {"a": 1}  # a link to a file is that file
    with pytest.raises(FileNotFoundError):
        read_yaml(tmp_path / "absent.yaml")
