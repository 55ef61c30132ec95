"""Problem sources by name: the embedded arithmetic generator and GSM8K/MATH-style files."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from prm.format import join_steps
from prm.tasks.arithmetic import ArithmeticConfig, ArithmeticProblem, generate_problems
from prm.tasks.datasets import FILE_SUFFIXES, LoadedProblems, load_problems
from prm.tasks.records import ProblemRecord
from warehouse import is_partition_value


def arithmetic_record(problem: ArithmeticProblem, config: ArithmeticConfig, seed: int, split: str) -> ProblemRecord:
    """The warehouse record of a generated problem; its ground truth goes into ``meta``."""
    return ProblemRecord(
        problem_id=problem.problem_id,
        task=f"arith_{problem.style}",
        split=split,
        question=problem.question,
        gold_answer=str(problem.answer),
        gold_solution=problem.gold_solution(),
        n_gold_steps=len(problem.gold_steps),
        difficulty=f"ops={config.n_ops} operators={config.operators} range={config.min_value}-{config.max_value}",
        meta={"expression": problem.expression, "intermediates": list(problem.intermediates),
              "style": problem.style},
        seed=seed,
    )


@dataclass(frozen=True)
class ArithmeticSourceConfig:
    """A mix of generated arithmetic problems: ``per_level`` problems for every (n_ops, style)."""

    n_ops: Sequence[int] = (2, 4, 8)  # difficulty levels; 8-step problems are where policies slip
    # The default policy's training distribution (prm.policy.PolicyTrainConfig): word problems with +/-
    # on single digits. Chains with * and operands to 20 are one knob away, for a stronger policy.
    styles: Sequence[str] = ("word",)  # "chain" and/or "word"
    per_level: int = 8  # problems per (n_ops, style)
    operators: str = "+-"
    max_value: int = 9
    split: str = "train"


def generate_arithmetic(config: ArithmeticSourceConfig, seed: int) -> list[ProblemRecord]:
    """Generate every level of ``config``; the same seed gives the same problems and ids.

    >>> records = generate_arithmetic(ArithmeticSourceConfig(n_ops=(2,), per_level=3), seed=0)
    >>> [r.n_gold_steps for r in records]
    [2, 2, 2]
    """
    records: dict[str, ProblemRecord] = {}
    for level, n_ops in enumerate(config.n_ops):
        for style_idx, style in enumerate(config.styles):
            arith = ArithmeticConfig(n_ops=n_ops, operators=config.operators, max_value=config.max_value, style=style)
            level_seed = seed * 1_000 + level * 10 + style_idx  # distinct, reproducible stream per level
            for problem in generate_problems(config.per_level, arith, seed=level_seed):
                # equal questions share an id, so duplicates across levels collapse instead of colliding
                records.setdefault(problem.problem_id, arithmetic_record(problem, arith, level_seed, config.split))
    return list(records.values())


BUILTIN_SOURCES: tuple[str, ...] = ("arith", "logic")
# A source name is a Dagster partition key and a warehouse partition folder (warehouse.store.is_partition_value),
# at most this long, starting with a letter or digit.
MAX_SOURCE_CHARS = 64


def is_source_name(name: str) -> bool:
    """Whether ``name`` can name a dropped-in source.

    >>> is_source_name("gsm8k"), is_source_name("mydata_"), is_source_name("-x"), is_source_name("a/b")
    (True, False, False, False)
    """
    return len(name) <= MAX_SOURCE_CHARS and name[:1].isalnum() and is_partition_value(name)


def day_seed(day: str, seed: int) -> int:
    """A seed per (day, base seed), so every nightly partition draws new problems reproducibly.

    >>> day_seed("2026-11-21", 0)
    20261121
    """
    return int(day.replace("-", "")) + seed * 100_000_000


def inbox_file(inbox: Path, source: str) -> Path:
    """The file a user dropped in the inbox for ``source`` (``<inbox>/<source>.jsonl`` etc.)."""
    for suffix in FILE_SUFFIXES:
        path = inbox / f"{source}{suffix}"
        if path.is_file():
            return path
        if path.is_symlink():
            raise FileNotFoundError(f"{path} is a symlink to {path.readlink()}, which does not exist; "
                                    "point it at the dataset file or replace it with the file")
    raise FileNotFoundError(
        f"source {source!r} has no file in {inbox} (looked for {source}{{{','.join(FILE_SUFFIXES)}}}); "
        "drop the dataset there or use the built-in source 'arith'"
    )


def generate_logic(n: int, seed: int, split: str = "train") -> list[ProblemRecord]:
    """``n`` propositional-logic problems (FoVer style) whose steps Z3 checks; ground truth in ``meta``.

    >>> [r.task for r in generate_logic(2, seed=0)]
    ['logic', 'logic']
    """
    from prm.tasks.logic import generate_logic_problem

    records: dict[str, ProblemRecord] = {}
    for i in range(n):
        problem = generate_logic_problem(seed * 10_000 + i)
        records.setdefault(problem.problem_id, ProblemRecord(
            problem_id=problem.problem_id, task="logic", split=split, question=problem.question,
            gold_answer=problem.answer, gold_solution=join_steps(problem.gold_steps) + f"Answer: {problem.answer}",
            n_gold_steps=len(problem.gold_steps), difficulty=f"steps={len(problem.gold_steps)}",
            meta={"facts": list(problem.facts), "rules": list(problem.rules), "target": problem.target},
            seed=seed * 10_000 + i))
    return list(records.values())


def load_source(
    source: str, day: str, *, arith: ArithmeticSourceConfig, seed: int, inbox: Path, limit: int | None = None,
    logic_problems: int = 16,
) -> LoadedProblems:
    """Problems of one (source, day) partition: generated for ``arith`` and ``logic``, else the inbox file
    (whose rejected and repeated rows come back with it, for the asset's metadata)."""
    if source == "arith":
        return LoadedProblems(tuple(generate_arithmetic(arith, seed=day_seed(day, seed))))
    if source == "logic":
        return LoadedProblems(tuple(generate_logic(logic_problems, seed=day_seed(day, seed))))
    return load_problems(inbox_file(inbox, source), source=source, limit=limit)


@dataclass(frozen=True)
class InboxFile:
    """A dataset file of the inbox that names a source."""

    path: Path
    source: str  # the file name without its suffix
    mtime: float  # modification time, so the sensor sees a replaced file


@dataclass(frozen=True)
class InboxScan:
    """What the inbox holds: usable dataset files, and the files refused with a message that says why."""

    files: tuple[InboxFile, ...]
    refused: dict[str, str]  # file name -> what is wrong and what to do


def scan_inbox(inbox: Path) -> InboxScan:
    """The dataset files of ``inbox`` (any suffix of ``FILE_SUFFIXES``); never raises on what it finds.

    >>> import tempfile
    >>> inbox = Path(tempfile.mkdtemp())
    >>> _ = (inbox / "arith.jsonl").write_text("{}")
    >>> _ = (inbox / "mine.jsonl").write_text("{}")
    >>> scan = scan_inbox(inbox)
    >>> [f.source for f in scan.files], list(scan.refused)
    (['mine'], ['arith.jsonl'])
    """
    if not inbox.is_dir():
        return InboxScan(files=(), refused={})
    files: dict[str, InboxFile] = {}
    refused: dict[str, str] = {}
    # Same precedence as inbox_file: of <source>.jsonl and <source>.json, the .jsonl file is the one read.
    candidates = [p for p in inbox.iterdir() if p.suffix in FILE_SUFFIXES]
    for path in sorted(candidates, key=lambda p: (p.stem, FILE_SUFFIXES.index(p.suffix))):
        source = path.stem
        if not is_source_name(source):
            refused[path.name] = (f"ignoring {path.name}: name it <source>{path.suffix} with letters, digits, "
                                  f"'_', '-', '.' ({MAX_SOURCE_CHARS} at most, starting with a letter or digit, not "
                                  "ending with '.' or '_')")
        elif source in BUILTIN_SOURCES:
            refused[path.name] = (f"ignoring {path.name}: {source!r} is a built-in source (generated, never read "
                                  f"from the inbox); rename the file, e.g. to {source}_data{path.suffix}")
        elif source in files:
            refused[path.name] = (f"ignoring {path.name}: {files[source].path.name} already names source "
                                  f"{source!r}; keep one of the two files")
        else:
            try:
                stat = path.stat()
            except OSError as exc:
                target = f" (a symlink to {path.readlink()})" if path.is_symlink() else ""
                refused[path.name] = (f"ignoring {path.name}{target}: cannot read it ({exc.strerror}); "
                                      "fix or remove the link")
                continue
            if not path.is_file():
                refused[path.name] = f"ignoring {path.name}: not a regular file; drop the dataset file itself"
                continue
            files[source] = InboxFile(path=path, source=source, mtime=stat.st_mtime)
    return InboxScan(files=tuple(files.values()), refused=refused)
