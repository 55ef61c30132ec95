"""One labeler protocol: every computed method of the method table resolves through ``get_labeler`` to the interface,
and the derived labelers give the rows of the functions they wrap."""

from __future__ import annotations

import inspect

import pytest

from prm.labeling import LABELERS, get_labeler
from prm.labeling.consensus import ConsensusResult, SolutionVerdicts, apply_policy, collect_verdicts
from prm.labeling.formal import verify_steps
from prm.labeling.judge import JudgeRun
from prm.labeling.progress import progress_labels
from prm.labeling.registry import computed_methods
from prm.labeling.types import DerivedLabeler, Labeler
from warehouse import TABLES
from warehouse.methods.table import METHODS


def test_every_computed_method_of_the_table_resolves_to_the_one_interface() -> None:
    computed = [m.name for m in METHODS if m.kind not in ("human", "model")]
    assert computed and list(LABELERS) == computed == list(computed_methods())
    for name in computed:
        labeler = get_labeler(name)
        assert labeler.name == name
        assert isinstance(labeler.config, LABELERS[name].config_type)
        params = list(inspect.signature(labeler.label).parameters)
        if LABELERS[name].needs == "rows":
            assert isinstance(labeler, DerivedLabeler)
            assert params == ["rows"]
            assert labeler.reads and set(labeler.reads) <= set(TABLES), (name, labeler.reads)
        else:
            assert isinstance(labeler, Labeler) and not isinstance(labeler, DerivedLabeler)
            assert params[:2] == ["solutions", "sampler" if LABELERS[name].needs == "rollouts" else "backend"]
            assert inspect.signature(labeler.label).parameters["skip"].kind is inspect.Parameter.KEYWORD_ONLY


def test_imported_methods_have_no_labeler() -> None:
    with pytest.raises(ValueError, match="unknown; use one of"):
        get_labeler("human")


STEPS = [{"solution_id": sid, "problem_id": pid, "step_idx": k, "text": t}
         for sid, pid, texts in (("a", "p", ("2+3 = 5", "5*2 = 11")), ("b", "q", ("x = 1", "not x")))
         for k, t in enumerate(texts)]
PROBLEMS = [{"problem_id": "p", "task": "arith_chain"}, {"problem_id": "q", "task": "logic"}]


def test_a_formal_labeler_gives_its_own_verifiers_rows_of_verify_steps() -> None:
    task_of = {p["problem_id"]: p["task"] for p in PROBLEMS}
    everything = verify_steps(STEPS, task_of)
    run = get_labeler("sympy").label({"steps": STEPS, "problems": PROBLEMS})
    assert run.rows() and run.rows() == [r for r in everything.labels if r["method"] == "sympy"]
    assert run.extra["verifications"] == [v for v in everything.verifications if v["verifier"] == "sympy"]
    assert run.solution_ids == ("a",) and run.cost_rollouts == 0


def test_progress_and_consensus_labelers_give_the_rows_of_the_functions_they_wrap() -> None:
    solutions = [{"solution_id": "a", "problem_id": "p", "is_correct": False, "status": "ok", "model": "policy"},
                 {"solution_id": "c", "problem_id": "p", "is_correct": True, "status": "ok", "model": "policy"}]
    mc = [{"solution_id": "a", "problem_id": "p", "step_idx": k, "method": "mc", "soft_label": v, "hard_label": v > 0,
           "n_rollouts": 8, "first_error": 1} for k, v in enumerate([0.5, 0.0])]
    judge = [{**r, "method": "judge", "first_error": 1} for r in mc]
    stale = [{**r, "method": "consensus", "first_error": 0} for r in mc]  # its own old rows are not a verdict
    progress = get_labeler("progress").label({"step_labels": mc + judge, "solutions": solutions})
    assert [lb.to_row() for lb in progress.labels] == [lb.to_row() for lb in progress_labels(mc, solutions)]
    assert [lb.hard_label for lb in progress.labels] == [True, False]
    rows = {"steps": STEPS, "step_labels": mc + judge + stale, "judgments": [], "verifications": []}
    run = get_labeler("consensus").label(rows)
    expected = apply_policy(collect_verdicts(STEPS, mc + judge))
    result = run.result_as(ConsensusResult)
    assert result.run == expected and result.run.kept == ("a",) and run.extra == {}
    assert run.rows() == expected.rows() and {r["first_error"] for r in run.rows()} == {1}
    assert result.verdicts and all(isinstance(v, SolutionVerdicts) for v in result.verdicts)
    with pytest.raises(TypeError, match="holds a ConsensusResult result, not a JudgeRun"):
        run.result_as(JudgeRun)
