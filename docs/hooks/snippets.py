"""Run the Python and shell snippets of the docs and the README, so a page cannot show code that fails.

Every ```` ```python ```` and ```` ```bash ```` block runs unless the line right above its fence is
``<!-- docs-test: skip (why) -->`` (a block that takes minutes, needs a server, a GPU or a warehouse the reader
has filled first), or it holds only ``make`` commands (they build the venv and run for minutes; ``make test``
runs these checks itself). A page's Python blocks run in order in one process, sharing names, like a reader pasting them
into one session; each bash block runs in ``bash -eo pipefail``. Both run in a scratch folder with the project's
``.venv`` and ``recipes`` linked in and ``PRM_DATA_ROOT``, ``PRM_INBOX`` and ``DAGSTER_HOME`` pointed inside it,
so nothing touches the project's own data.

    python -m docs.hooks.snippets README.md docs/getting-started.md
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUN_LANGUAGES = ("python", "bash")
SKIP = re.compile(r"^<!-- docs-test: skip\b")  # anchored, no nested quantifiers: linear on any line
FENCE = re.compile(r"^(`{3,})([\w+-]*)")
TIMEOUT_S = 600  # one page's snippets; the slowest (a PRM trained for a few dozen steps) takes about a minute
LINKED = (".venv", "recipes")  # what the snippets reach by relative path, as from the project root


@dataclass(frozen=True)
class Snippet:
    """One fenced block: where it starts (1-based line of the fence), its language, its code, and why it is
    skipped (None: it runs)."""

    path: Path
    line: int
    language: str
    code: str
    skip: str | None


def collect(path: Path) -> list[Snippet]:
    """Every fenced block of a Markdown file.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.md"
    >>> text = "x\\n<!-- docs-test: skip (slow) -->\\n```bash\\nsleep 99\\n```\\n"
    >>> _ = p.write_text(text + "```python\\nprint(1)\\n```\\n")
    >>> [(s.line, s.language, s.code, s.skip is not None) for s in collect(p)]
    [(3, 'bash', 'sleep 99', True), (6, 'python', 'print(1)', False)]
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        match = FENCE.match(lines[i].strip())
        if not match:
            i += 1
            continue
        fence, language = match.group(1), match.group(2).lower()
        body, j = [], i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j])
            j += 1
        above = lines[i - 1].strip() if i > 0 else ""
        skip = above if SKIP.match(above) else ("make targets" if _only_make(body) else None)
        found.append(Snippet(path, i + 1, language, "\n".join(body), skip))
        i = j + 1
    return found


def _only_make(body: list[str]) -> bool:
    commands = [line.strip() for line in body if line.strip() and not line.strip().startswith("#")]
    return bool(commands) and all(c.startswith("make ") or c == "make" for c in commands)


def markdown_files(repo: Path = REPO) -> list[Path]:
    """The README and every page under docs/ (the generators' folder aside)."""
    pages = [p for p in sorted((repo / "docs").rglob("*.md")) if "hooks" not in p.relative_to(repo / "docs").parts]
    return [repo / "README.md", *pages]


_DRIVER = """
import json, sys, traceback
blocks = json.loads(sys.stdin.read())
scope = {"__name__": "__main__"}
for line, code in blocks:
    try:
        exec(compile(code, f"{sys.argv[1]}:{line}", "exec"), scope)
    except BaseException:
        traceback.print_exc()
        print(f"SNIPPET FAILED: {sys.argv[1]}:{line}", file=sys.stderr)
        sys.exit(1)
"""


def _environment(work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PRM_DATA_ROOT=str(work / "data" / "warehouse"), PRM_INBOX=str(work / "data" / "inbox"),
               DAGSTER_HOME=str(work / ".dagster_home"), PYTHONPATH=str(REPO))
    return env


def run_page(path: Path, work: Path, repo: Path = REPO) -> list[str]:
    """Run one page's snippets in ``work``; the failures, each as ``file:line: what it printed``."""
    for name in LINKED:
        link = work / name
        if not link.exists() and (repo / name).exists():
            link.symlink_to(repo / name)
    (work / ".dagster_home").mkdir(exist_ok=True)
    env = _environment(work)
    shown = path.relative_to(repo) if path.is_relative_to(repo) else path
    failures = []
    snippets = [s for s in collect(path) if s.language in RUN_LANGUAGES and s.skip is None]
    python = [(s.line, s.code) for s in snippets if s.language == "python"]
    if python:
        done = subprocess.run([sys.executable, "-c", _DRIVER, str(shown)], input=json.dumps(python), cwd=work,
                              env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
        if done.returncode:
            failures.append(f"{shown}: python snippet failed:\n{done.stderr[-3000:]}")
    for s in (s for s in snippets if s.language == "bash"):
        done = subprocess.run(["bash", "-eo", "pipefail", "-c", s.code], cwd=work, env=env, capture_output=True,
                              text=True, timeout=TIMEOUT_S, check=False)
        if done.returncode:
            failures.append(f"{shown}:{s.line}: bash snippet exited {done.returncode}:\n"
                            f"{(done.stdout + done.stderr)[-3000:]}")
    return failures


def main(argv: list[str] | None = None) -> int:
    paths = [Path(a).resolve() for a in (argv if argv is not None else sys.argv[1:])] or markdown_files()
    failures = []
    for path in paths:
        with tempfile.TemporaryDirectory(prefix="docs-snippets-") as work:
            failures += run_page(path, Path(work))
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"{len(paths)} pages, {len(failures)} failing", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
