"""A rerun keeps the partition's solutions (and every row derived from them) unless their sampling changed.

Fast: the policy's tokenizer and version are real, the engine is a scripted backend that counts its calls.
"""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg
import pytest

from assets.generation import solutions
from assets.partitions import partition_key, register_sources
from assets.problems import problems
from assets.resources import GenerationResource, WarehouseResource
from prm.generation import Completion, GenerationRequest
from prm.generation.types import BackendInfo

DAY = "2026-11-19"
PROBLEMS = {"problems": {"config": {"n_ops": [2, 3], "per_level": 2}}}  # 4 problems
CALLS: list[int] = []  # requests per engine call, across runs (each run builds its own resource)


class ScriptedBackend:
    """Answers every request with the same two-step solution."""

    info = BackendInfo("scripted", "scripted", 512)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        CALLS.append(len(requests))
        return [Completion(texts=("1 + 1 = 2\nAnswer: 2",) * r.n, finish_reasons=("stop",) * r.n, prompt_tokens=5,
                           completion_tokens=(7,) * r.n, index=i) for i, r in enumerate(requests)]

    def close(self) -> None:
        pass


class ScriptedGeneration(GenerationResource):
    def get(self) -> ScriptedBackend:
        return ScriptedBackend()


@pytest.fixture
def materialize(instance, resource, tiny_policy_dir):
    register_sources(instance, ["arith"])
    CALLS.clear()

    def run(selection: Sequence[str], **solutions_config) -> dg.ExecuteInProcessResult:
        ops = {"solutions": {"config": {"n_samples": 2, **solutions_config}}}
        config = {"ops": {**(PROBLEMS if "problems" in selection else {}), **ops}}
        result = dg.materialize(
            [problems, solutions], selection=[dg.AssetKey(name) for name in selection],
            partition_key=partition_key(DAY, "arith"), instance=instance, run_config=config, raise_on_error=False,
            resources={"warehouse": WarehouseResource(), "generation": ScriptedGeneration(model=str(tiny_policy_dir))})
        assert result.success
        return result

    return run


def _solutions_meta(result: dg.ExecuteInProcessResult) -> dict:
    return {k: v.value for k, v in result.asset_materializations_for_node("solutions")[0].metadata.items()}


def _label_one_step(wh) -> None:
    """A label derived from the partition's solutions, as a labeler killed mid-partition leaves them."""
    sol = wh.read_partition("solutions", "arith", DAY).to_pylist()[0]
    wh.write("step_labels", [{"solution_id": sol["solution_id"], "problem_id": sol["problem_id"], "step_idx": 0,
                              "method": "mc", "status": "labeled", "labeler_version": "test"}],
             source="arith", day=DAY, writer="mc_labels")


def test_a_rerun_reuses_the_solutions_and_keeps_their_labels(materialize, resource) -> None:
    wh = resource.get()
    first = materialize(["problems", "solutions"])
    assert _solutions_meta(first)["reused"] is False and CALLS == [4]
    _label_one_step(wh)
    version = wh.version("solutions")

    again = materialize(["problems", "solutions"])  # the whole-graph rerun re-materializes problems too
    meta = _solutions_meta(again)
    assert meta["reused"] is True and meta["reused_from_run"] == first.run_id
    assert meta["dagster/row_count"] == 8 and meta["steps"] == _solutions_meta(first)["steps"]
    assert meta["completion_tokens"] == _solutions_meta(first)["completion_tokens"] == 8 * 7
    assert meta["prompt_tokens"] == _solutions_meta(first)["prompt_tokens"] == 4 * 5
    assert CALLS == [4]  # the engine was not asked again
    assert wh.version("solutions") == version  # not rewritten: no new commit
    assert wh.read_partition("step_labels", "arith", DAY).num_rows == 1

    # A reused materialization keeps the key, so a third run reuses from the first run's rows again.
    third = materialize(["solutions"])
    assert _solutions_meta(third)["reused_from_run"] == first.run_id and CALLS == [4]


@pytest.mark.parametrize("change", [{"resample": True}, {"max_tokens": 64}, {"seed": 1}, {"n_samples": 3},
                                    {"temperature": 0.5}])
def test_a_changed_sampling_or_resample_samples_afresh(materialize, resource, change: dict) -> None:
    wh = resource.get()
    materialize(["problems", "solutions"])
    _label_one_step(wh)
    again = materialize(["solutions"], **change)
    assert _solutions_meta(again)["reused"] is False and len(CALLS) == 2
    assert wh.read_partition("step_labels", "arith", DAY).num_rows == 0  # labels of the old solutions are gone


def test_solutions_without_their_steps_are_sampled_again(materialize, resource) -> None:
    """A run killed between the solutions write and the steps write leaves steps of another run."""
    wh = resource.get()
    materialize(["problems", "solutions"])
    steps = wh.read_partition("steps", "arith", DAY).drop_columns(["run_id"])
    wh.write("steps", steps, source="arith", day=DAY, writer="solutions", replace=True, run_id="killed-run")
    again = materialize(["solutions"])
    assert _solutions_meta(again)["reused"] is False and len(CALLS) == 2
