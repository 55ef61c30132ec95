"""The shipped recipes' measured runs, for docs/recipes.md: wall time, the slowest stages and the answer rates, read
from the committed logs of ``make demo`` and ``prm-pipeline run`` (text logs: a ``# command, conditions`` first
line, the stage table ``prm-pipeline run`` prints, and a last ``rc=0 seconds=N`` line).

No figure here is typed by hand: a recipe's cost changes on the page when its log is rerun and committed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from docs.hooks.results_io import table

# The runs whose logs are committed, in the order the page lists them.
RUNS = (("recipes/default.yaml", "demo.log", "what `make demo` runs"),
        ("recipes/smollm2-gsm8k.yaml", "recipe_smollm2_gsm8k.log", "`prm-pipeline run`"))
SLOWEST = 3  # stages named in the cost table; the rest are seconds
# Anchored, without nested quantifiers: linear on any line of a log.
STAGE = re.compile(r"^(\w+) +(\w+) +([\d,]+|-) +(\d+(?:\.\d+)?)$")
RATES = re.compile(r"^(solutions|rollouts) of (\S+) (\d{4}-\d\d-\d\d): ([\d,]+) rows, answer extracted "
                   r"(\d+(?:\.\d+)?)%, correct against gold (\d+(?:\.\d+)?)%$")
END = re.compile(r"^rc=(-?\d+) seconds=(\d+(?:\.\d+)?)$")
DATE = re.compile(r"\b\d{4}-\d\d-\d\d\b")


@dataclass(frozen=True)
class Run:
    """One committed run of a recipe: when and where it ran, how long, per stage, and its answer rates."""

    log: str
    date: str
    conditions: tuple[str, ...]
    seconds: float
    stages: tuple[tuple[str, float], ...]  # (asset, seconds)
    rates: tuple[tuple[str, str, int, float, float], ...]  # (table, "source day", rows, % extracted, % correct)


def read_run(path: Path) -> Run:
    """A run log parsed; a ValueError naming the log when it has no header or did not end with ``rc=0``.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.log"
    >>> _ = p.write_text("# prm-pipeline run x.yaml --set a=../b, 2026-11-27, 2 CPU cores, OMP_NUM_THREADS=1\\n"
    ...                  "job asset rows seconds\\nrefresh solutions 192 416.3\\nprm prm_model - 2148.3\\n"
    ...                  "solutions of s 2026-11-27: 192 rows, answer extracted 82.3%, correct against gold 1.0%\\n"
    ...                  "rc=0 seconds=3126\\n")
    >>> r = read_run(p)
    >>> r.date, r.conditions, r.seconds, r.stages, r.rates
    ('2026-11-27', ('2 CPU cores', 'OMP_NUM_THREADS=1'), 3126.0, (('solutions', 416.3), ('prm_model', 2148.3)), \
(('solutions', 's 2026-11-27', 192, 82.3, 1.0),))
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or not lines[0].startswith("#"):
        raise ValueError(f"{path}: the first line should be '# <command>, <conditions>, <date>'")
    header = lines[0].lstrip("# ")
    dates = DATE.findall(header)
    # The header's parts that say where it ran: not the command, its paths, the date or the commit.
    conditions = tuple(p.strip() for p in header.split(", ")[1:]
                       if p.strip() and "/" not in p and not DATE.fullmatch(p.strip()) and not p.startswith("commit "))
    ends = [m for line in lines if (m := END.match(line.strip()))]
    if not ends or ends[-1].group(1) != "0":
        raise ValueError(f"{path}: no closing 'rc=0 seconds=N' line: the run failed or the log is cut short")
    stages = tuple((m.group(2), float(m.group(4))) for line in lines if (m := STAGE.match(line.strip()))
                   and m.group(1) != "job")
    rates = tuple((m.group(1), f"{m.group(2)} {m.group(3)}", int(m.group(4).replace(",", "")), float(m.group(5)),
                   float(m.group(6))) for line in lines if (m := RATES.match(line.strip())))
    return Run(path.name, dates[0] if dates else "-", conditions, float(ends[-1].group(2)), stages, rates)


def _minutes(seconds: float) -> str:
    """Seconds as minutes with one decimal.

    >>> _minutes(3126), _minutes(0.7)
    ('52.1 min', '0.0 min')
    """
    return f"{seconds / 60:.1f} min"


def costs_table(results: Path) -> str:
    """One row per committed recipe run: wall time end to end, the slowest stages, and where it ran."""
    rows = []
    for recipe, log, how in RUNS:
        run = read_run(results / log)
        slow = sorted(run.stages, key=lambda s: -s[1])[:SLOWEST]
        rows.append([f"`{recipe}` ({how})", _minutes(run.seconds),
                     ", ".join(f"`{asset}` {_minutes(s)}" for asset, s in slow) or "-",
                     "; ".join([*run.conditions, run.date]), f"`benchmarks/results/{log}`"])
    return table(["recipe", "measured end to end", "slowest stages", "ran on", "log"], rows)


def rates_table(results: Path, log: str = "recipe_smollm2_gsm8k.log") -> str:
    """The answer rates one run printed: rows, the share with an extracted answer, the share reaching gold."""
    run = read_run(results / log)
    if not run.rates:
        raise ValueError(f"{results / log}: no 'solutions of ...: N rows, answer extracted ...' line to report")
    return table(["table", "partition", "rows", "answer extracted", "correct against gold"],
                 [[f"`{name}`", partition, f"{rows:,}", f"{extracted:.1f}%", f"{correct:.1f}%"]
                  for name, partition, rows, extracted, correct in run.rates])
