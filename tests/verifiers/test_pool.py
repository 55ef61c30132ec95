"""The worker pool: order, chunking, and survival of hung, crashing and raising tasks."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from verifiers import PoolConfig, StepVerdict, VerifierPool, check_steps

TASK = "verifier_pool_tasks:misbehave"


@pytest.fixture(scope="module")
def pool():
    # Workers import TASK by module name and start with the parent's sys.path.
    here = str(Path(__file__).parent)
    sys.path.insert(0, here)
    try:
        with VerifierPool(PoolConfig(workers=2, chunk_size=4)) as p:
            yield p
    finally:
        sys.path.remove(here)


def test_results_keep_input_order(pool: VerifierPool) -> None:
    items = [f"{i}" for i in range(50)]
    assert pool.run(TASK, items, timeout_s=5) == items


@pytest.mark.parametrize(
    "bad,reason,replaced",
    [
        ("hang", "timed out after 1 s", 1),  # cut at the timeout, not after the task's 60 s sleep
        ("crash", "worker crashed", 1),
        ("raise", "RuntimeError: task failed", 0),  # reported by the worker, which keeps serving
    ],
)
def test_bad_item_fails_alone_and_batch_continues(pool: VerifierPool, bad: str, reason: str, replaced: int) -> None:
    # Counts and reasons, not wall-clock time: a loaded 2-core machine once took 11 s for this batch.
    items = ["a", "b", bad, "c", "d", "e", "f", "g"]
    before = pool.replaced
    results = pool.run(TASK, items, timeout_s=1.0)
    assert results[:2] == ["a", "b"] and results[3:] == ["c", "d", "e", "f", "g"]
    failed = results[2]
    assert isinstance(failed, StepVerdict) and failed.status == "unverifiable" and failed.detail == reason
    assert pool.replaced - before == replaced


def test_hung_worker_is_replaced(pool: VerifierPool) -> None:
    before = pool.replaced
    pool.run(TASK, ["hang"], timeout_s=0.5)
    assert pool.replaced == before + 1
    assert pool.run(TASK, ["ok"], timeout_s=5) == ["ok"]


def test_check_steps_from_a_thread() -> None:
    out: list[list[StepVerdict]] = []
    thread = threading.Thread(target=lambda: out.append(check_steps(["2+2=4", "2+2=5"])))
    thread.start()
    thread.join(timeout=60)
    assert [v.status for v in out[0]] == ["correct", "incorrect"]


def test_logic_steps_through_the_pool() -> None:
    verdicts = check_steps(["A is true, if A then B -> B is true", "B is true -> A is true"], kind="logic")
    assert [v.status for v in verdicts] == ["correct", "incorrect"]


@pytest.mark.parametrize("kwargs", [{"workers": 0}, {"chunk_size": 0}])
def test_config_rejects_nonsense(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="must be >= 1"):
        PoolConfig(**kwargs)


def test_pool_works_from_python_c_and_stdin_scripts() -> None:
    """Workers must not try to re-import a ``__main__`` that has no file (``python -c``, stdin, notebooks)."""
    import subprocess
    import sys

    code = "from verifiers import check_steps; print([v.status for v in check_steps(['2+2=4', '2+2=5'])])"
    for args, stdin in (([sys.executable, "-c", code], None), ([sys.executable, "-"], code)):
        proc = subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=120)
        assert proc.stdout.strip() == "['correct', 'incorrect']", proc.stderr[-1500:]


GUARD_SCRIPT = """
import sys
from verifiers import check_steps
print("RUN", flush=True)
{body}
"""


def test_a_script_without_a_main_guard_fails_with_the_fix(tmp_path: Path) -> None:
    """The forkserver re-imports the main script: unguarded, its pipeline call ran again in the forkserver and the
    parent got `unverifiable` for every item and exit code 0; now both say to add the guard and the run fails."""
    import subprocess

    call = "print([v.status for v in check_steps(['2+2=4', '2+2=5'])], flush=True)"
    unguarded, guarded = tmp_path / "unguarded.py", tmp_path / "guarded.py"
    unguarded.write_text(GUARD_SCRIPT.format(body=call))
    guarded.write_text(GUARD_SCRIPT.format(body=f"if __name__ == '__main__':\n    {call}"))
    bad = subprocess.run([sys.executable, str(unguarded)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert bad.returncode != 0
    assert "put the script's pipeline call under `if __name__ == \"__main__\":`" in bad.stderr
    assert f"re-imported {unguarded}" in bad.stderr  # the child names the script it is re-running
    assert "unverifiable" not in bad.stdout
    good = subprocess.run([sys.executable, str(guarded)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    # Guarded, the re-import prints RUN again (top-level code) but runs no pipeline call.
    assert good.returncode == 0 and good.stdout.splitlines()[-1] == "['correct', 'incorrect']", good.stderr
    assert good.stdout.count("['correct'") == 1


HEAVY_MAIN = """
import mmap, sys
sys.path.insert(0, {tasks!r})
# What `import torch` does to a main script's address space (~2.6 GB): the forkserver re-imports this file, so every
# worker starts with it mapped.
RESERVED = mmap.mmap(-1, 3 << 30)
if __name__ == "__main__":
    from verifiers import VerifierPool
    with VerifierPool() as pool:
        print([v.status for v in pool.run("grade", [("\\\\frac{{1}}{{2}}", "0.5"), ("\\\\sqrt{{4}}", "3")])])
        print(pool.run("verifier_pool_tasks:misbehave", ["hog", "ok"])[0].detail)
"""


def test_the_memory_limit_is_a_budget_above_what_a_heavy_main_script_leaves_in_each_worker(tmp_path: Path) -> None:
    """A script that imports torch left every worker over the absolute 2 GiB RLIMIT_AS before its first item, and
    every Math-Verify grade came back `unverifiable` (MemoryError); a runaway item must still fail alone."""
    import subprocess

    script = tmp_path / "heavy.py"
    script.write_text(HEAVY_MAIN.format(tasks=str(Path(__file__).parent)))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    grades, hog = out.stdout.splitlines()[-2:]
    assert grades == "['correct', 'incorrect']"
    assert hog.startswith("MemoryError")
