"""Adaptive MC as a method of its own (``mc_adaptive``): on a partition fixed-N MC already labeled, it writes its rows
under its own name beside MC's, counts the rollouts each step used, and the stored rollouts serve it without an
engine."""

from __future__ import annotations

from collections.abc import Sequence

from prm.generation import BackendInfo, Completion, GenerationRequest
from prm.labeling import MCConfig, label_method_partition, label_partition
from warehouse import Warehouse

KW = {"source": "arith", "day": "2026-11-20"}
FIRST, SECOND = "2*3 = 6", "1+6 = 7"


class _Policy:
    """Finishes a prefix that holds both steps with the gold answer always; an earlier prefix every other time."""

    info = BackendInfo("fake", "fake", 512)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        out = []
        for i, r in enumerate(requests):
            texts = (("Answer: 7",) * r.n if SECOND in r.prompt
                     else tuple("Answer: 7" if j % 2 == 0 else "Answer: 8" for j in range(r.n)))
            out.append(Completion(texts=texts, finish_reasons=("stop",) * r.n, prompt_tokens=5,
                                  completion_tokens=(3,) * r.n, index=i))
        return out

    def close(self) -> None:
        pass


def _no_engine() -> _Policy:
    raise AssertionError("the stored rollouts serve every step: no engine may start")


def _fill(wh: Warehouse) -> None:
    wh.write("problems", [{"problem_id": "p1", "task": "arith_chain", "split": "test", "question": "1+2*3",
                           "gold_answer": "7"}], **KW)
    text = f"{FIRST}\n{SECOND}\nAnswer: 7"
    wh.write("solutions", [{"solution_id": "s0", "problem_id": "p1", "sample_idx": 0, "text": text, "n_steps": 2,
                            "final_answer": "7", "is_correct": True, "status": "ok", "model": "policy",
                            "completion_tokens": 20}], **KW)
    wh.write("steps", [{"solution_id": "s0", "problem_id": "p1", "step_idx": k, "text": t, "char_start": 8 * k,
                        "char_end": 8 * k + 7} for k, t in enumerate([FIRST, SECOND])], **KW)


def test_adaptive_mc_writes_its_own_rows_with_the_rollouts_each_step_used(wh: Warehouse) -> None:
    _fill(wh)
    prompt = {"prompt": lambda q: f"Q: {q}\n", "progress": lambda _: None}
    mc = label_partition(wh, "mc", MCConfig(), _Policy, model="policy", run_id="r1", **prompt, **KW)
    assert mc.cost_rollouts == 16 and mc.new_rollouts == 16  # N = 8 for each of the two prefixes
    before = sorted((r["step_idx"], r["soft_label"], r["cost_rollouts"])
                    for r in wh.read_partition("step_labels", **KW).to_pylist())

    report = label_method_partition(wh, "mc_adaptive", MCConfig(adaptive=True, adaptive_max=8), run_id="r2",
                                    backend=_no_engine, model="policy", **prompt, **KW)
    assert report.method == "mc_adaptive" and report.new_rollouts == 0
    rows = wh.read_partition("step_labels", **KW).to_pylist()
    adaptive = sorted((r["step_idx"], r["soft_label"], r["n_rollouts"], r["cost_rollouts"])
                      for r in rows if r["method"] == "mc_adaptive")
    # The first prefix's 4 rollouts split (7, 8, 7, 8): topped up to 8; the second's agree: it stops at 4.
    assert adaptive == [(0, 0.5, 8, 8), (1, 1.0, 4, 4)]
    assert report.cost_rollouts == 12 and report.audit is None  # no exact truth in this partition
    assert sorted((r["step_idx"], r["soft_label"], r["cost_rollouts"]) for r in rows if r["method"] == "mc") == before
