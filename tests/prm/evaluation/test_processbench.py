"""ProcessBench: the official metric against a transcription of run_eval.py, the critique template and answer reader
against the official ones, the threshold rules (never chosen on the split they are reported on), rows read in part,
the critic path with a scripted backend, and --out rows that recompute the figures exactly."""

from __future__ import annotations

import hashlib
import random
import re
import subprocess
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from prm.evaluation import CRITIQUE_TEMPLATE, GenerationCritic, evaluate_processbench_files
from prm.evaluation.critic import critique_index, critique_prompt, extract_boxed
from prm.evaluation.processbench_eval import CRITIC, FIXED, StepReads, choose_threshold_on, f1_interval, read_steps
from prm.files import read_jsonl, write_jsonl
from prm.first_error import ScoredSolution, as_solutions, f1_ci
from prm.first_error.scores import choose_threshold
from prm.format import ContextOverflowError
from prm.generation import BackendInfo, Completion
from prm.labeling.judge import JUDGE_TEMPLATE
from prm.metrics import official_score
from prm.metrics.processbench import score_rows

ROOT = Path(__file__).resolve().parents[3]
MIRROR = Path("/work/.mirror/QwenLM+ProcessBench/repo")
# sha256 of code/templates/critique_template.txt after run_eval.py's read().strip() (QwenLM/ProcessBench e802463).
TEMPLATE_SHA256 = "0e7dba24bfaa9dea379907e11b8dc701c6cd6e74453ab2ffc9b1d63237cc4434"


# --- run_eval.py, transcribed --------------------------------------------------------------------------------------

def run_eval_figures(labels: Sequence[int], preds: Sequence[int | None]) -> tuple[float, float, float]:
    """code/run_eval.py's arithmetic (percentages), line for line."""
    res_data = [{"label": y, "prediction": p, "match": p == y} for y, p in zip(labels, preds, strict=True)]
    error_data = [e for e in res_data if e["label"] != -1]
    correct_data = [e for e in res_data if e["label"] == -1]
    acc1 = np.mean([e["match"] for e in error_data]) * 100
    acc2 = np.mean([e["match"] for e in correct_data]) * 100
    f1 = 2 * acc1 * acc2 / (acc1 + acc2)
    return acc1, acc2, f1


def run_eval_extract(text: str) -> int | None:
    """run_eval.py's extract_answer and its int() with the bare except."""
    matches = re.findall(r"\\boxed\{([^}]*)\}", text)
    pred = matches[-1].strip() if matches else None
    try:
        return int(pred)
    except Exception:
        return None


def prepare_input_boxed(template: str, problem: str, steps: Sequence[str]) -> str:
    """run_eval.py's prepare_input_boxed, up to the user message."""
    tagged_response = ""
    for sdx, step in enumerate(steps):
        tagged_response += f"<paragraph_{sdx}>\n{step}\n</paragraph_{sdx}>\n\n"
    tagged_response = tagged_response.strip()
    return template.format(problem=problem, tagged_response=tagged_response)


LABELS = [-1, -1, -1, 0, 1, 2, 3, 1, -1, 4]
PREDICTION_SETS = {
    "mixed with unreadable": [-1, 2, None, 0, 1, None, 3, 2, -1, 4],
    "all right predicted": [-1] * 10,
    "first step always": [0] * 10,
    "perfect": list(LABELS),
    "random": [random.Random(7).choice([-1, 0, 1, 2, 3, 4, None]) for _ in LABELS],
}


@pytest.mark.parametrize("name", PREDICTION_SETS)
def test_official_score_equals_run_eval_arithmetic(name: str) -> None:
    preds = PREDICTION_SETS[name]
    acc1, acc2, f1 = run_eval_figures(LABELS, preds)
    ours = official_score(LABELS, preds)
    assert (ours.n_error, ours.n_correct) == (6, 4)
    assert 100 * ours.error_acc == pytest.approx(acc1, abs=1e-9)
    assert 100 * ours.correct_acc == pytest.approx(acc2, abs=1e-9)
    assert 100 * ours.f1 == pytest.approx(f1, abs=1e-9)


def test_both_accuracies_zero_is_f1_zero_where_run_eval_prints_nan() -> None:
    preds = [None] * len(LABELS)  # every answer unreadable: both accuracies 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's 0/0
        acc1, acc2, f1 = run_eval_figures(LABELS, preds)
    assert (acc1, acc2) == (0.0, 0.0) and np.isnan(f1)
    assert official_score(LABELS, preds).f1 == 0.0


# --- the critique template and the answer reader ------------------------------------------------------------------

def test_the_critique_template_is_the_official_one_character_for_character() -> None:
    assert hashlib.sha256(CRITIQUE_TEMPLATE.encode()).hexdigest() == TEMPLATE_SHA256
    # The judge's template (prm.labeling) is the same text with the placeholder named {paragraphs}.
    assert JUDGE_TEMPLATE.replace("{paragraphs}", "{tagged_response}") == CRITIQUE_TEMPLATE
    if not (MIRROR / "HEAD").exists() and not (MIRROR / ".git").exists():
        pytest.skip(f"{MIRROR} (the QwenLM/ProcessBench mirror) is absent; the digest above pins the text")
    official = subprocess.run(["git", "-C", str(MIRROR), "show", "HEAD:code/templates/critique_template.txt"],
                              capture_output=True, text=True, check=True).stdout
    assert official.strip() == CRITIQUE_TEMPLATE


def test_the_prompt_is_prepare_input_boxed_with_the_text_unchanged() -> None:
    problem, steps = "Find $x$ if \\boxed{2}+x=3.", ["x = 3 - 2", "</paragraph_0> x = \\boxed{1}", "  "]
    assert critique_prompt(problem, steps) == prepare_input_boxed(CRITIQUE_TEMPLATE, problem, steps)


READER_CASES = ["\\boxed{3}", "a \\boxed{1} b \\boxed{ -1 }", "\\boxed{}", "\\boxed{2", "no box", "\\boxed{1.5}",
                "\\boxed{a \\boxed{3}", "\\boxed{+4}", "\\boxed{1_0}", "\\boxed{\u0663}", "}\\boxed{5}}", "\\boxed {1}",
                "\\boxed{\n7\n}", "\\boxed{2}\\boxed{x", "\\boxed{" + "9" * 200 + "}"]


@pytest.mark.parametrize("text", READER_CASES)
def test_the_index_is_read_as_run_eval_reads_it(text: str) -> None:
    assert critique_index(text) == run_eval_extract(text)


def test_the_reader_agrees_with_the_regex_on_random_text() -> None:
    rng = random.Random(0)
    pieces = ["\\boxed{", "}", "{", "-", "1", "23", " ", "\n", "x", "\\boxed"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(12)))
        matches = re.findall(r"\\boxed\{([^}]*)\}", text)
        assert extract_boxed(text) == (matches[-1].strip() if matches else None), text
        assert critique_index(text) == run_eval_extract(text), text


def test_the_reader_is_linear_on_hostile_output() -> None:
    for text in ("\\boxed{" * 200_000, "\\boxed{" + " " * 2_000_000, "\\boxed{1}" * 200_000):
        start = time.process_time()
        critique_index(text)
        assert time.process_time() - start < 0.5


# --- threshold rules ----------------------------------------------------------------------------------------------

class TableScorer:
    """Scores looked up by problem text; ``context`` steps at most fit (``encode`` raises past it)."""

    def __init__(self, table: dict[str, list[float]], context: int | None = None) -> None:
        self.table, self.context, self.closed = table, context, False

    def encode(self, problem: str, steps: Sequence[str]) -> None:
        if self.context is not None and len(steps) > self.context:
            raise ContextOverflowError(f"{len(steps)} steps exceed {self.context}")

    def score_batch(self, items, batch_size=None) -> list[list[float]]:
        return [self.table[problem][: len(steps)] for problem, steps in items]

    def close(self) -> None:
        self.closed = True


def _write_split(path: Path, rows: list[tuple[str, list[float], int]]) -> Path:
    """A ProcessBench JSON array; each row: (problem, the scores its steps will get, label)."""
    import json

    path.write_text(json.dumps([{"id": f"{path.stem}-{i}", "generator": "g", "problem": p,
                                 "steps": [f"step {k}" for k in range(len(s))], "final_answer_correct": y == -1,
                                 "label": y} for i, (p, s, y) in enumerate(rows)]))
    return path


# On gsm8k every row is right for thresholds in (0.38, 0.45]; on math in (0.68, 0.72]: the splits' choices differ.
GSM8K = [(f"g{i}", s, y) for i, (s, y) in enumerate([([0.9, 0.35], 1), ([0.9, 0.38], 1), ([0.8, 0.45], -1),
                                                      ([0.5, 0.9], -1), ([0.2, 0.9], 0), ([0.7, 0.6], -1)])]
MATH = [(f"m{i}", s, y) for i, (s, y) in enumerate([([0.9, 0.65], 1), ([0.95, 0.62], 1), ([0.9, 0.75], -1),
                                                    ([0.8, 0.72], -1), ([0.1, 0.9], 0), ([0.85, 0.68], 1)])]


def _files(tmp_path: Path) -> tuple[dict[str, Path], TableScorer]:
    files = {"gsm8k": _write_split(tmp_path / "gsm8k.json", GSM8K), "math": _write_split(tmp_path / "math.json", MATH)}
    return files, TableScorer({p: s for p, s, _ in GSM8K + MATH})


def _own_choice(rows: list[tuple[str, list[float], int]]) -> float:
    return choose_threshold_on([StepReads(tuple(s), True) for _, s, _ in rows], [y for _, _, y in rows])[0]


def test_each_split_is_reported_at_the_fixed_threshold_and_at_one_chosen_on_the_other_split(tmp_path: Path) -> None:
    files, scorer = _files(tmp_path)
    report = evaluate_processbench_files(scorer, files, model="table")
    rows = {(r.split, r.threshold_from): r for r in report.results}
    assert list(rows) == [("gsm8k", FIXED), ("gsm8k", "math"), ("math", FIXED), ("math", "gsm8k")]
    assert rows["gsm8k", FIXED].threshold == rows["math", FIXED].threshold == 0.5
    on_gsm8k, on_math = _own_choice(GSM8K), _own_choice(MATH)
    assert 0.38 < on_gsm8k <= 0.45 < 0.68 < on_math <= 0.72  # the splits disagree, so a leak would show
    assert rows["gsm8k", "math"].threshold == on_math  # never its own choice
    assert rows["math", "gsm8k"].threshold == on_gsm8k
    # gsm8k at math's threshold (about 0.7): its 3 errors found, but each all-right row has a step below it
    g = rows["gsm8k", "math"]
    assert (g.error_acc, g.correct_acc) == (1.0, 0.0) and g.f1 == 0.0
    assert {k: v for k, v in g.to_json().items() if k != "f1_ci"} == {
        "split": "gsm8k", "rows": 6, "error_acc": 1.0, "correct_acc": 0.0, "f1": 0.0, "threshold": on_math,
        "threshold_from": "math"}
    assert report.notes == () and report.model == "table"


def test_a_single_split_is_reported_at_the_fixed_threshold_only_and_says_so(tmp_path: Path) -> None:
    files, scorer = _files(tmp_path)
    report = evaluate_processbench_files(scorer, {"gsm8k": files["gsm8k"]})
    assert [(r.split, r.threshold_from, r.threshold) for r in report.results] == [("gsm8k", FIXED, 0.5)]
    assert "only the fixed threshold" in report.notes[0]


def test_a_split_that_cannot_choose_leaves_the_chosen_row_empty_and_says_why(tmp_path: Path) -> None:
    files, scorer = _files(tmp_path)
    only_errors = _write_split(tmp_path / "errs.json", [r for r in MATH if r[2] >= 0])
    report = evaluate_processbench_files(scorer, {"gsm8k": files["gsm8k"], "errs": only_errors})
    empty = next(r for r in report.results if r.split == "gsm8k" and r.threshold_from == "errs")
    assert empty.threshold is None and empty.f1 is None
    assert any("no threshold could be chosen on errs" in n for n in report.notes)


def test_the_chooser_agrees_with_choose_threshold_on_rows_read_whole() -> None:
    rng = random.Random(3)
    for _ in range(50):
        sols = []
        for i in range(rng.randrange(2, 30)):
            scores = [round(rng.random(), 2) for _ in range(rng.randrange(1, 6))]
            sols.append({"solution_id": str(i), "problem_id": str(i // 2), "scores": scores,
                         "first_error": rng.choice([-1, *range(len(scores))])})
        solutions = as_solutions(sols)
        if len({s.first_error < 0 for s in solutions}) < 2:
            continue
        reads = [StepReads(s.scores, True) for s in solutions]
        assert choose_threshold_on(reads, [s.first_error for s in solutions])[0] == choose_threshold(solutions)


def test_the_interval_is_f1_ci_on_rows_read_whole() -> None:
    rng = random.Random(5)
    sols = [ScoredSolution(str(i), f"p{i // 3}", tuple(rng.random() for _ in range(3)), rng.choice([-1, 0, 1, 2]))
            for i in range(60)]
    preds = [StepReads(s.scores, True).predict(0.5) for s in sols]
    assert f1_interval([s.problem_id for s in sols], [s.first_error for s in sols], preds) == f1_ci(sols, 0.5)


# --- rows longer than the PRM's context ---------------------------------------------------------------------------

def test_a_row_past_the_context_is_read_as_far_as_it_fits(tmp_path: Path) -> None:
    rows = [("a", [0.9, 0.2, 0.9, 0.9], 1), ("b", [0.9, 0.9, 0.9, 0.1], 3), ("c", [0.9, 0.9, 0.9, 0.9], -1),
            ("d", [0.9, 0.9], -1), ("e", [0.9, 0.1], 1)]
    scorer = TableScorer({p: s for p, s, _ in rows}, context=2)
    reads = read_steps(scorer, [(p, [f"s{k}" for k in range(len(s))]) for p, s, _ in rows])
    assert reads == [StepReads((0.9, 0.2), False), StepReads((0.9, 0.9), False), StepReads((0.9, 0.9), False),
                     StepReads((0.9, 0.9), True), StepReads((0.9, 0.1), True)]
    assert [r.predict(0.5) for r in reads] == [1, None, None, -1, 1]  # a flagged read step, else unknown
    path = _write_split(tmp_path / "long.json", rows)
    result = evaluate_processbench_files(scorer, {"long": path}).results[0]
    assert (result.n_partial, result.n_unread, result.error_acc, result.correct_acc) == (3, 2, 2 / 3, 0.5)
    # Unread rows still count: they are misses in the chooser's denominators too.
    assert choose_threshold_on(reads, [y for _, _, y in rows])[0] == pytest.approx(0.55)


def test_a_limit_takes_rows_spread_through_the_file_so_a_sorted_split_keeps_its_mix(tmp_path: Path) -> None:
    rows = [(f"e{i}", [0.9], 0) for i in range(6)] + [(f"r{i}", [0.9], -1) for i in range(4)]  # errors first
    path = _write_split(tmp_path / "sorted.json", rows)
    result = evaluate_processbench_files(TableScorer({p: s for p, s, _ in rows}), {"s": path}, limit=5).results[0]
    assert (result.rows, result.n_error, result.n_correct) == (5, 3, 2)  # rows 0, 2, 4, 6, 8
    assert evaluate_processbench_files(TableScorer({p: s for p, s, _ in rows}), {"s": path}, limit=50).results[0].rows \
        == 10


def test_scores_outside_0_1_are_refused_naming_the_row() -> None:
    bad = TableScorer({"q": [1.5]})
    with pytest.raises(ValueError, match=r"row 'x1'.*one P\(good\) in \[0, 1\]"):
        read_steps(bad, [("q", ["s"])], ids=["x1"])


# --- the critic -----------------------------------------------------------------------------------------------------

class Plain:
    """A tokenizer without a chat template: the prompt is the message and a newline (prm.format.format_prompt)."""

    chat_template = None


class ScriptedBackend:
    """Answers request i with ``texts[i]`` (None: an error row); records the requests."""

    def __init__(self, texts: list[str | None], context: int = 0) -> None:
        self.texts, self.requests = texts, []
        self.info = BackendInfo("scripted", "scripted", context)

    def generate(self, requests):
        self.requests += list(requests)
        start = len(self.requests) - len(requests)
        rows = []
        for i, _ in enumerate(requests):
            text = self.texts[start + i]
            rows.append(Completion.failed(i, "engine error") if text is None else
                        Completion((text,), ("length" if text.endswith("...") else "stop",), 10, (5,), index=i))
        return rows

    def close(self) -> None:
        pass


def test_the_critic_asks_greedily_with_the_official_prompt_and_reads_the_last_box(tmp_path: Path) -> None:
    rows = [("q0", [0.9], -1), ("q1", [0.9, 0.9], 1), ("q2", [0.9, 0.9, 0.9], 0), ("q3", [0.9], -1)]
    path = _write_split(tmp_path / "gsm8k.json", rows)
    texts = ["fine \\boxed{-1}", "para 1: \\boxed{0} no, \\boxed{1}", "I think...", None]
    backend = ScriptedBackend(texts)
    critic = GenerationCritic(backend, Plain(), name="scripted-judge", max_tokens=64)
    report = evaluate_processbench_files(critic, {"gsm8k": path})
    req = backend.requests[0]
    assert req.prompt == critique_prompt("q0", ["step 0"]) + "\n"
    assert (req.n, req.temperature, req.max_tokens) == (1, 0.0, 64)
    assert [p["predicted"] for p in report.predictions] == [-1, 1, None, None]
    (result,) = report.results
    assert (result.threshold, result.threshold_from, result.error_acc, result.correct_acc) == (None, CRITIC, 0.5, 0.5)
    assert result.n_unread == 2 and report.model == "scripted-judge"
    assert "1 requests failed, 1 critiques cut at the token budget, 1 without" in report.notes[0]


def test_the_critique_budget_shrinks_to_fit_the_served_context() -> None:
    class CharTokenizer(Plain):
        def __call__(self, text: str) -> dict[str, list[int]]:
            return {"input_ids": list(range(len(text)))}

    prompt_len = len(critique_prompt("q", ["s"]) + "\n")
    backend = ScriptedBackend(["\\boxed{0}", "x"], context=prompt_len + 10)
    critic = GenerationCritic(backend, CharTokenizer(), name="c", max_tokens=100)
    assert critic.first_errors([("q", ["s"]), ("q" * 50, ["s"])]) == [0, None]
    assert [r.max_tokens for r in backend.requests] == [10]  # the second prompt alone fills the context
    assert critic.stats.failed == 1 and "fills the model's context" in critic.stats.errors[0]


# --- --out rows -----------------------------------------------------------------------------------------------------

def test_the_prediction_rows_recompute_each_split_exactly(tmp_path: Path) -> None:
    files, scorer = _files(tmp_path)
    report = evaluate_processbench_files(scorer, files)
    out = report.write_predictions(tmp_path / "preds.jsonl")
    rows = read_jsonl(out)
    assert [set(r) for r in rows] == [{"id", "split", "label", "predicted"}] * 12
    for result in (r for r in report.results if r.threshold_from == FIXED):
        again = score_rows([r for r in rows if r["split"] == result.split])
        assert (again.f1, again.error_acc, again.correct_acc) == (result.f1, result.error_acc, result.correct_acc)
    write_jsonl(rows, tmp_path / "copy.jsonl")  # the rows are plain JSON
