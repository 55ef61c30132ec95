"""Active labels: only the solutions the PRM is unsure of reach the backing labeler, within the budget, in a
seed-stable order; trusted ones are skipped or pseudo-labeled, and a training set can leave pseudo-labels out.

The PRM here is a scripted :class:`prm.scoring.Scorer` (P(good) per step keyed by the solution's steps), or the tiny
random PRM of tests/tiny_models.py where the real scoring path matters."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import pytest

from prm.labeling import ActiveConfig, OmegaPRMConfig, get_labeler, label_partition
from prm.labeling.active import ActiveLabeler
from prm.labeling.uncertainty import DropoutUncertainty, StepBelief, is_trusted
from tests.prm.labeling.test_sampler import _ScriptedBackend

SURE_WRONG = ("ok", "bad", "ok")  # the PRM is sure: good, then an error
UNSURE_WRONG = ("ok", "ok", "bad")  # the PRM wavers on the second step


class ScriptedPRM:
    """P(good) per step by the solution's steps; records what it read."""

    def __init__(self, probs: Mapping[tuple[str, ...], Sequence[float]], default: float = 0.5) -> None:
        self.probs, self.default, self.read = dict(probs), default, []

    def score_batch(self, items, batch_size=None):  # type: ignore[no-untyped-def]
        self.read += [problem for problem, _ in items]
        return [list(self.probs.get(tuple(steps), [self.default] * len(steps))) for _, steps in items]

    def score_steps(self, problem, steps):  # type: ignore[no-untyped-def]
        return self.score_batch([(problem, steps)])[0]


PAIR_PRM = {SURE_WRONG: [0.97, 0.03, 0.4], UNSURE_WRONG: [0.95, 0.6, 0.2]}


@pytest.mark.parametrize("backing", ["omegaprm", "mc"])
def test_only_the_unsure_solution_goes_to_the_backing_labeler(oracle_cls, sampler_of, solution, backing) -> None:
    sols = [solution("sure", "p1", SURE_WRONG), solution("unsure", "p2", UNSURE_WRONG)]
    oracle = oracle_cls()
    run = ActiveLabeler(ActiveConfig(backing=backing), scorer=ScriptedPRM(PAIR_PRM)).label(sols, sampler_of(oracle))
    assert run.solution_ids == ("unsure",) and {r["solution_id"] for r in run.rows()} == {"unsure"}
    assert oracle.asked and all(steps == UNSURE_WRONG[: len(steps)] for steps in oracle.asked)
    assert {r["method"] for r in run.rows()} == {"active"} and run.cost_rollouts > 0
    params = json.loads(run.rows()[0]["params_json"])
    assert params["backing"] == backing and params["backing_params"]["method"] == "active"
    assert (run.extra["selected"], run.extra["trusted"], run.extra["pseudo_labeled"]) == (1, 1, 0)
    # The backing labeler found the unsure solution's error where the oracle put it.
    assert [r["hard_label"] for r in sorted(run.rows(), key=lambda r: r["step_idx"])] == [True, True, False]


def test_trusted_solutions_get_pseudo_labels_when_asked(oracle_cls, sampler_of, solution) -> None:
    sols = [solution("sure", "p1", SURE_WRONG), solution("unsure", "p2", UNSURE_WRONG)]
    labeler = ActiveLabeler(ActiveConfig(pseudo_labels=True), scorer=ScriptedPRM(PAIR_PRM))
    run = labeler.label(sols, sampler_of(oracle_cls()))
    pseudo = sorted((r for r in run.rows() if r["solution_id"] == "sure"), key=lambda r: r["step_idx"])
    assert [r["status"] for r in pseudo] == ["pseudo"] * 3
    assert [r["hard_label"] for r in pseudo] == [True, False, False]  # good until the PRM's first error
    assert [r["soft_label"] for r in pseudo] == [0.97, 0.03, 0.0] and {r["first_error"] for r in pseudo} == {1}
    assert sum(r["cost_rollouts"] for r in pseudo) == 0 and run.solution_ids == ("unsure", "sure")
    assert {r["status"] for r in run.rows() if r["solution_id"] == "unsure"} <= {"labeled", "by_convention"}


def test_the_prm_reads_the_question_when_given(solution) -> None:
    prm = ScriptedPRM(PAIR_PRM)
    ActiveLabeler(ActiveConfig(), scorer=prm).plan([solution("a", "p1", SURE_WRONG)], questions={"p1": "2 + 2?"})
    ActiveLabeler(ActiveConfig(), scorer=prm).plan([solution("a", "p1", SURE_WRONG)])
    assert prm.read == ["2 + 2?", "Qp1\n"]  # without questions, the policy prompt


def test_the_budget_sends_the_most_unsure_first(solution) -> None:
    probs = {("a", str(i)): [0.95, p] for i, p in enumerate((0.55, 0.7, 0.5, 0.85, 0.99))}
    sols = [solution(f"s{i}", f"p{i}", ["a", str(i)]) for i in range(5)]
    plan = ActiveLabeler(ActiveConfig(max_share=0.5), scorer=ScriptedPRM(probs)).plan(sols)
    assert plan.selected == ("s2", "s0") and plan.over_budget == ("s1", "s3") and plan.trusted == ("s4",)
    plan = ActiveLabeler(ActiveConfig(max_solutions=1), scorer=ScriptedPRM(probs)).plan(sols)
    assert plan.selected == ("s2",)
    # Solutions an earlier run labeled count against the budget: a resumed run never spends it twice.
    plan = ActiveLabeler(ActiveConfig(max_solutions=1), scorer=ScriptedPRM(probs)).plan(sols, done={"s0"})
    assert plan.selected == ()


def test_a_fixed_seed_repeats_the_order_of_equally_unsure_solutions(solution) -> None:
    sols = [solution(f"s{i}", f"p{i}", ["a", "b"]) for i in range(12)]

    def chosen(seed: int) -> tuple[str, ...]:
        return ActiveLabeler(ActiveConfig(prm=None, max_solutions=4, seed=seed)).plan(sols).selected

    assert chosen(0) == chosen(0) and len(chosen(0)) == 4
    assert len({chosen(seed) for seed in range(5)}) > 1  # the seed, not the input order, breaks ties


def test_without_a_prm_every_solution_is_unsure(oracle_cls, sampler_of, solution) -> None:
    sols = [solution("sure", "p1", SURE_WRONG), solution("unsure", "p2", UNSURE_WRONG)]
    active = get_labeler("active", ActiveConfig(prm=None)).label(sols, sampler_of(oracle_cls()))
    omega = get_labeler("omegaprm", OmegaPRMConfig(screen=False)).label(sols, sampler_of(oracle_cls()))

    def labels(run):  # type: ignore[no-untyped-def]
        return sorted((r["solution_id"], r["step_idx"], r["hard_label"], r["status"]) for r in run.rows())

    assert {r["solution_id"] for r in active.rows()} == {"sure", "unsure"}
    assert labels(active) == labels(omega)  # OmegaPRM, unscreened, over every solution


def test_the_trust_rule_reads_steps_up_to_the_first_predicted_error() -> None:
    rule = {"low": 0.1, "high": 0.9, "max_std": 0.01}
    assert is_trusted(StepBelief((0.95, 0.05, 0.5), (0.0, 0.0, 0.0)), **rule)  # 0.5 is after the error
    assert not is_trusted(StepBelief((0.95, 0.95, 0.5), (0.0, 0.0, 0.0)), **rule)  # no error: every step counts
    assert not is_trusted(StepBelief((0.95, 0.05), (0.02, 0.0)), **rule)  # confident but the passes disagree
    with pytest.raises(ValueError, match=r"low=0\.6 must be below high=0\.4"):
        ActiveConfig(low=0.6, high=0.4)
    with pytest.raises(ValueError, match="uncertainty='heads' is unknown"):
        ActiveConfig(uncertainty="heads")


def test_mc_dropout_on_a_tiny_prm_repeats_by_seed_and_restores_the_model(prm_folders) -> None:
    from prm.scoring import load_prm

    scorer = load_prm(prm_folders["prm-pipeline"])
    items = [("1 plus 1", ["1+1 = 2", "2+1 = 3"]), ("2 plus 2", ["2+2 = 5"])]
    plain = scorer.score_batch(items)
    first = DropoutUncertainty(passes=4, seed=7).beliefs(scorer, items)
    assert first == DropoutUncertainty(passes=4, seed=7).beliefs(scorer, items)
    assert any(s > 0 for b in first for s in b.spread)  # the passes differ: dropout was on
    assert [len(b.probs) for b in first] == [2, 1]
    assert not any(m.training for m in scorer.model.modules())  # back in eval mode
    assert scorer.score_batch(items) == plain
    with pytest.raises(TypeError, match="needs a PRM run by transformers"):
        DropoutUncertainty(passes=2, seed=0).beliefs(ScriptedPRM({}), items)


def _partition(wh, n: int) -> dict[str, str]:  # type: ignore[no-untyped-def]
    kw = {"source": "arith", "day": "2026-11-20"}
    problems, solutions, steps = [], [], []
    for i in range(n):
        texts = [f"{i}+1 = {i + 1}", f"{i + 1}+1 = {i + 2}"]
        problems.append({"problem_id": f"p{i}", "task": "arith_word", "split": "test", "question": f"{i} plus 2",
                         "gold_answer": "1"})
        solutions.append({"solution_id": f"s{i}", "problem_id": f"p{i}", "sample_idx": 0, "text": "\n".join(texts),
                          "n_steps": 2, "status": "ok", "model": "policy", "is_correct": True})
        start = 0
        for k, t in enumerate(texts):
            steps.append({"solution_id": f"s{i}", "problem_id": f"p{i}", "step_idx": k, "text": t,
                          "char_start": start, "char_end": start + len(t)})
            start += len(t) + 1
    wh.write("problems", problems, **kw)
    wh.write("solutions", solutions, **kw)
    wh.write("steps", steps, **kw)
    return kw


def test_a_partition_is_planned_once_so_the_budget_is_the_partitions(wh, prm_folders) -> None:
    kw = _partition(wh, 4)
    # No step of the random PRM is at P <= 0 or >= 1: every solution is unsure; one chunk per solution.
    config = ActiveConfig(prm=str(prm_folders["prm-pipeline"]), low=0.0, high=1.0, max_solutions=2, backing="mc",
                          rollouts=2)
    report = label_partition(wh, "active", config, _ScriptedBackend, model="policy", run_id="r", prompt=lambda q: q,
                             chunk_solutions=1, progress=lambda _: None, **kw)
    rows = [r for r in wh.read_partition("step_labels", **kw).to_pylist() if r["method"] == "active"]
    assert report.labeled_solutions == 2 and len({r["solution_id"] for r in rows}) == 2
    again = label_partition(wh, "active", config, _ScriptedBackend, model="policy", run_id="r2", prompt=lambda q: q,
                            chunk_solutions=1, progress=lambda _: None, **kw)
    assert again.labeled_solutions == 0  # the resumed run finds the budget spent


def test_a_training_set_can_leave_pseudo_labels_out(wh) -> None:
    from prm.training import TrainingSetConfig, build_training_set
    from tests.prm.training.conftest import DAY, N_PROBLEMS, fill_warehouse

    fill_warehouse(wh)
    sympy = [r for r in wh.read_partition("step_labels", "arith", DAY).to_pylist() if r["method"] == "sympy"]
    pseudo = {r["solution_id"] for r in sympy if int(r["problem_id"][1:]) % 3 == 0}
    wh.write("step_labels", [{**r, "method": "active", "status": "pseudo" if r["solution_id"] in pseudo else
                              "labeled"} for r in sympy], source="arith", day="2026-11-21")
    kept = build_training_set(wh.root, TrainingSetConfig(method="active"))
    paid = build_training_set(wh.root, TrainingSetConfig(method="active", exclude_pseudo=True))
    assert sum(kept.stats.solutions.values()) == 2 * N_PROBLEMS
    assert {r["solution_id"] for r in paid.rows} == {r["solution_id"] for r in kept.rows} - pseudo
    assert paid.stats.dropped_unlabeled == len(pseudo) > 0


def test_the_method_row_registry_and_generated_asset() -> None:
    import dagster as dg

    from pipelines.definitions import defs
    from pipelines.jobs import refresh_job
    from prm.flywheel import FlywheelConfig
    from warehouse.methods import method, opt_in_label_assets, recipe_label_assets

    row = method("active")
    assert (row.kind, row.generated, row.asset_key, row.opt_in) == ("rollout", True, "active_labels", True)
    assert isinstance(get_labeler("active"), ActiveLabeler) and "active" not in recipe_label_assets()
    graph = defs.resolve_asset_graph()
    key = dg.AssetKey("active_labels")
    assert key in graph.get_all_asset_keys() and graph.get(key).group_name == "labeling"
    checks = {k.name for k in graph.asset_check_keys if k.asset_key == key}
    assert checks and any("schema" in name for name in checks)
    assert "active_labels" in opt_in_label_assets()
    assert key not in refresh_job.selection.resolve(graph)  # opt-in: the refresh job leaves it out
    assert FlywheelConfig(label_method="active").labeler("models/r0") == ActiveConfig(prm="models/r0", rollouts=8)
    assert FlywheelConfig().label_method == "omegaprm"


def test_the_backing_search_starts_where_the_prm_puts_the_first_error(oracle_cls, sampler_of, solution) -> None:
    wrong_at_5 = ("ok",) * 5 + ("bad", "ok", "ok")
    unsure = {wrong_at_5: [0.95, 0.9, 0.8, 0.7, 0.6, 0.3, 0.5, 0.5]}  # wavering; its first error at step 5
    sols = [solution("w", "p", wrong_at_5)]

    def asked(config: ActiveConfig) -> list[int]:
        sampler = sampler_of(oracle_cls(pattern=(True, False)))
        run = ActiveLabeler(config, scorer=ScriptedPRM(unsure)).label(sols, sampler)
        assert {r["first_error"] for r in run.rows()} == {5}
        return [len(steps) for steps in sampler.oracle.asked]

    # OmegaPRM checks the prefix through the predicted error, then the one before it: two estimates, not three.
    assert asked(ActiveConfig(backing="omegaprm")) == [6, 5]
    assert asked(ActiveConfig(backing="mc"))[:2] != [6, 5]  # MC walks every prefix; no hint to take
