"""A warehouse shaped like GSM8K after sampling and MC labeling: gold answers, solutions graded against them, and no
step truth anywhere (what outcome-level evaluation must work from)."""

from __future__ import annotations

from warehouse import Warehouse

DAY = "2026-11-26"
N_PROBLEMS, N_SAMPLES = 24, 4


def fill_gsm8k_like(wh: Warehouse, source: str = "gsm8k") -> None:
    """GSM8K-shaped rows: gold answers, solutions graded against them, no step truth anywhere. Sample 0 of every
    problem is right, sample 1 wrong, sample 2 right on even problems, sample 3 states no answer (ungradable);
    ``mc`` labels every step (a wrong or unanswered solution's steps after the first bad), as rollouts would."""
    problems, solutions, steps, labels = [], [], [], []
    for p in range(N_PROBLEMS):
        pid, gold = f"g{p:02d}", str(10 + p)
        problems.append({"problem_id": pid, "task": "gsm8k", "split": "test", "question": f"Tom has {p} and 10 more?",
                         "gold_answer": gold, "n_gold_steps": 2})
        for s in range(N_SAMPLES):
            right = s == 0 or (s == 2 and p % 2 == 0)
            answer = None if s == 3 else gold if right else str(11 + p)
            texts = [f"He has {p}.", f"Add 10 to get {answer or '?'}.", f"The answer is {answer or 'unclear'}"]
            sid = f"{pid}-s{s}"
            solutions.append({"solution_id": sid, "problem_id": pid, "sample_idx": s, "text": "\n".join(texts),
                              "n_steps": len(texts), "final_answer": answer,
                              "is_correct": None if answer is None else right, "status": "ok", "model": "smol"})
            start = 0
            for k, text in enumerate(texts):
                steps.append({"solution_id": sid, "problem_id": pid, "step_idx": k, "text": text,
                              "char_start": start, "char_end": start + len(text), "is_correct_truth": None})
                start += len(text) + 1
                good = right or k == 0
                labels.append({"solution_id": sid, "problem_id": pid, "step_idx": k, "labeler_version": "t",
                               "method": "mc", "hard_label": good, "soft_label": 0.9 if good else 0.1,
                               "status": "labeled", "cost_rollouts": 4})
    kw = {"source": source, "day": DAY}
    wh.write("problems", problems, **kw)
    wh.write("solutions", solutions, **kw)
    wh.write("steps", steps, **kw)
    wh.write("step_labels", labels, **kw)
