"""Answer extraction on real text: GSM8K and MATH500 gold solutions, and SmolLM2-135M-Instruct's own solutions.

Usage:
  ``.venv/bin/python benchmarks/extraction.py --generate``  samples the committed file
  ``tests/verifiers/data/smollm2_samples.jsonl`` once with the embedded SmolLM2 through the project's vLLM backend
  (24 GSM8K + 16 MATH500 problems x 2 samples at temperature 0.7, bare and with an answer-format instruction);
  ``.venv/bin/python benchmarks/extraction.py``  reads that file and the gold solutions and prints one JSON object
  (also written to ``benchmarks/results/extraction.log``): per text set, the share of texts with an extracted
  answer and the share graded equal to the gold answer, for the extractor of commit ``OLD_COMMIT`` (before
  "the answer is X" without a colon) and today's, strict and with the last-number fallback.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from prm.format import PromptTemplate
from verifiers import extract_answer, grade_answers

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
SAMPLES = ROOT / "tests" / "verifiers" / "data" / "smollm2_samples.jsonl"
RESULT = ROOT / "benchmarks" / "results" / "extraction.log"
OLD_COMMIT = "71e9220"  # the extractor before "the answer is X" without a colon, "$...$" and the last number
MODEL = "smollm2-135m-instruct"
# The answer-format instruction of the "instruction" variant: Math-Shepherd's answer line, which the extractor
# reads by design, and one step per line, which prm.format.segment cuts on.
INSTRUCTION = ("Solve the problem step by step, one step per line. "
               "End with a last line of the form: The answer is: <number>")
VARIANTS = {"bare": PromptTemplate(), "instruction": PromptTemplate(instruction=INSTRUCTION)}
N_GSM8K, N_MATH, N_SAMPLES, TEMPERATURE, MAX_TOKENS, SEED = 24, 16, 2, 0.7, 384, 0


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def problems() -> list[dict]:
    """The seeded problem sample: ``source``, ``problem_id``, ``question``, ``gold_answer``."""
    rng = random.Random(SEED)
    gsm = _read(DATA / "gsm8k" / "test.jsonl")
    math = _read(DATA / "math500" / "test.jsonl")
    rows = [{"source": "gsm8k", "problem_id": f"gsm8k-{i}", "question": gsm[i]["question"],
             "gold_answer": gsm[i]["answer"].rsplit("####", 1)[1].strip().replace(",", "")}
            for i in sorted(rng.sample(range(len(gsm)), N_GSM8K))]
    rows += [{"source": "math500", "problem_id": f"math500-{i}", "question": math[i]["problem"],
              "gold_answer": math[i]["answer"]} for i in sorted(rng.sample(range(len(math)), N_MATH))]
    return rows


def generate() -> None:
    """Sample the committed SmolLM2 file (a few minutes on 2 CPU cores)."""
    from prm.datagen import sample_solution_rows
    from prm.generation import GenerationConfig, make_backend
    from prm.models import prompter_for

    rows = problems()
    out = []
    with make_backend(GenerationConfig(model=MODEL, seed=SEED)) as backend:
        for variant, template in VARIANTS.items():
            prompter = prompter_for(MODEL, template)
            sols, _, stats = sample_solution_rows(backend, rows, prompter, model=MODEL, n=N_SAMPLES, seed=SEED,
                                                  max_tokens=MAX_TOKENS, temperature=TEMPERATURE)
            print(f"{variant}: {stats.n_solutions} solutions, {stats.n_correct} correct", file=sys.stderr)
            by_id = {r["problem_id"]: r for r in rows}
            out += [{"variant": variant, "source": by_id[s["problem_id"]]["source"], "problem_id": s["problem_id"],
                     "gold_answer": by_id[s["problem_id"]]["gold_answer"], "prompt_version": s["prompt_version"],
                     "sample_idx": s["sample_idx"], "finish_reason": s["finish_reason"], "text": s["text"]}
                    for s in sols if s["status"] == "ok"]
    SAMPLES.parent.mkdir(parents=True, exist_ok=True)
    tmp = SAMPLES.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in out))
    tmp.replace(SAMPLES)
    print(f"wrote {len(out)} samples to {SAMPLES}", file=sys.stderr)


def old_extractor() -> Callable[[str], str | None]:
    """``extract_answer`` as of :data:`OLD_COMMIT`, read from git (our own code, not model text)."""
    source = subprocess.run(["git", "show", f"{OLD_COMMIT}:verifiers/extract.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "old_extract.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location("old_extract", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module.extract_answer


def rates(texts: list[str], golds: list[str], extract: Callable[[str], str | None]) -> dict[str, float | int]:
    """Share of ``texts`` with an extracted answer, and share graded equal to their gold answer."""
    answers = [extract(t) for t in texts]
    grades = grade_answers([(a, g) for a, g in zip(answers, golds, strict=True)])
    n = len(texts)
    return {"n": n, "extracted": round(sum(a is not None for a in answers) / n, 4),
            "correct": round(sum(g is True for g in grades) / n, 4)}


def measure() -> dict:
    """The JSON report (see the module docstring)."""
    extractors = {"old": old_extractor(), "new": extract_answer,
                  "new_last_number": lambda t: extract_answer(t, last_number=True)}
    sets: dict[str, tuple[list[str], list[str]]] = {}
    if DATA.is_dir():
        gsm = _read(DATA / "gsm8k" / "test.jsonl")
        math = _read(DATA / "math500" / "test.jsonl")
        sets["gold/gsm8k"] = ([r["answer"] for r in gsm], [r["answer"].rsplit("####", 1)[1].strip() for r in gsm])
        sets["gold/math500"] = ([r["solution"] for r in math], [r["answer"] for r in math])
    samples = _read(SAMPLES)
    for key in [*sorted({(s["source"], s["variant"]) for s in samples}), ("all", "all")]:
        chosen = [s for s in samples if key == ("all", "all") or (s["source"], s["variant"]) == key]
        sets[f"smollm2/{key[0]}/{key[1]}"] = ([s["text"] for s in chosen], [s["gold_answer"] for s in chosen])
    return {"model": MODEL, "temperature": TEMPERATURE, "max_tokens": MAX_TOKENS, "old_commit": OLD_COMMIT,
            "instruction": INSTRUCTION,
            "sets": {name: {k: rates(texts, golds, fn) for k, fn in extractors.items()}
                     for name, (texts, golds) in sets.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generate", action="store_true", help="sample the committed SmolLM2 file first")
    args = parser.parse_args()
    if args.generate:
        generate()
    report = measure()
    RESULT.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
