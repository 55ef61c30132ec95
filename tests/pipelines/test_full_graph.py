"""The whole refresh graph in-process on a tiny config: real vLLM engine, real labelers, real checks. The run is
the session's ``refresh_run`` (tests/pipelines/conftest.py); the resume test reruns on a copy of its warehouse."""

from __future__ import annotations

import shutil

import dagster as dg
import pytest

from assets.partitions import partition_key, register_sources
from pipelines.definitions import defs
from tests.pipelines.conftest import REFRESH_DAY, RefreshRun, tiny_run_config
from warehouse import connect
from warehouse.methods import opt_in_label_assets

pytestmark = pytest.mark.slow


def test_the_refresh_graph_fills_every_table_and_passes_blocking_checks(refresh_run: RefreshRun) -> None:
    result = refresh_run.result
    assert result.success
    graph = defs.resolve_asset_graph()
    outside = ("prm", "rl", "search", "flywheel")  # the refresh job: not the policy nor these groups
    left_out = {dg.AssetKey(a) for a in ("policy_model", *opt_in_label_assets())}  # and the opt-in label methods
    in_job = {k for k in graph.get_all_asset_keys() if graph.get(k).group_name not in outside and k not in left_out}
    blocking = {k.name for k in graph.asset_check_keys
                if graph.get_check_spec(k).blocking and k.asset_key in in_job}
    evaluations = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert blocking <= set(evaluations)
    assert all(evaluations[name] for name in blocking)

    con = connect(refresh_run.root)
    counts = dict(con.execute(
        "SELECT 'problems', count(*) FROM problems UNION ALL SELECT 'solutions', count(*) FROM solutions "
        "UNION ALL SELECT 'rollouts', count(*) FROM rollouts UNION ALL SELECT 'label_audit', count(*) FROM label_audit"
    ).fetchall())
    assert counts["problems"] == 4 and counts["solutions"] == 8
    assert counts["rollouts"] > 0 and counts["label_audit"] >= 1
    methods = {m for (m,) in con.execute("SELECT DISTINCT method FROM step_labels").fetchall()}
    assert {"mc", "omegaprm", "sympy", "judge"} <= methods
    (judged,) = con.execute("SELECT count(*) FROM judgments WHERE n_votes = 2").fetchall()[0]
    assert judged == 3
    (verified,) = con.execute("SELECT count(*) FROM verifications").fetchall()[0]
    (n_steps,) = con.execute("SELECT count(*) FROM steps").fetchall()[0]
    assert verified == n_steps  # every step gets a verdict, `unverifiable` included
    consensus = result.asset_materializations_for_node("consensus_labels")[0].metadata
    assert "| mc vs truth |" in consensus["agreement"].value
    # Every step of every ok solution has an MC label, and labeled_steps shows it beside the step text.
    (unlabeled,) = con.execute("SELECT count(*) FROM labeled_steps WHERE mc_hard IS NULL").fetchall()[0]
    assert unlabeled == 0

    mc = result.asset_materializations_for_node("mc_labels")[0].metadata
    # The rollouts asset paid for 2 rollouts per prefix; MC (N=3) only tops up the third one, and writes it.
    assert 0 < mc["new_rollouts"].value < mc["cost_rollouts"].value
    omega = result.asset_materializations_for_node("omegaprm_labels")[0].metadata
    sampled = result.asset_materializations_for_node("rollouts")[0].metadata["dagster/row_count"].value
    assert counts["rollouts"] == sampled + mc["new_rollouts"].value + omega["new_rollouts"].value
    # The rollouts asset (seed 1) and the MC labeler (seed 2) render every step prefix the same way, so MC's
    # top-ups land on prefixes the asset already rolled out: no prefix of MC's own.
    (mc_only,) = con.execute("SELECT count(DISTINCT prefix_hash) FROM rollouts WHERE seed = 2 AND prefix_hash "
                             "NOT IN (SELECT prefix_hash FROM rollouts WHERE seed = 1)").fetchall()[0]
    assert mc_only == 0
    # Every stored step is exactly the characters its span cuts out of its solution's text.
    (misplaced,) = con.execute("SELECT count(*) FROM steps s JOIN solutions so USING (solution_id) "
                               "WHERE substring(so.text, s.char_start + 1, s.char_end - s.char_start) <> s.text"
                               ).fetchall()[0]
    assert misplaced == 0
    # labeled_steps has a column pair for every method written, holding that method's labels.
    for (method, n) in con.execute("SELECT method, count(hard_label) FROM step_labels GROUP BY 1").fetchall():
        (shown,) = con.execute(f"SELECT count({method}_hard) FROM labeled_steps").fetchall()[0]
        assert shown == n, method


def test_materializing_again_resumes_without_duplicates(instance, resource, refresh_run: RefreshRun,
                                                        tiny_policy_dir, tiny_context) -> None:
    # The first materialization is the shared run: its warehouse, copied, is this test's to change.
    assert refresh_run.result.success
    shutil.copytree(refresh_run.root, resource.get().root, dirs_exist_ok=True)
    register_sources(instance, ["arith"])
    job = defs.resolve_job_def("refresh")
    config = tiny_run_config(str(tiny_policy_dir), tiny_context)
    labels = [dg.AssetKey("mc_labels")]
    again = job.execute_in_process(partition_key=partition_key(REFRESH_DAY, "arith"), instance=instance,
                                   run_config={**config, "ops": {"mc_labels": config["ops"]["mc_labels"]}},
                                   asset_selection=labels, raise_on_error=False)
    assert again.success
    meta = again.asset_materializations_for_node("mc_labels")[0].metadata
    assert meta["labeled_solutions"].value == 0 and meta["skipped_already_labeled"].value > 0
    con = connect(resource.get().root)
    dupes = con.execute("SELECT count(*) FROM (SELECT solution_id, step_idx, method FROM step_labels "
                        "GROUP BY ALL HAVING count(*) > 1)").fetchall()[0][0]
    assert dupes == 0

    # Re-sampled solutions (another seed) make the earlier labels stale: they are replaced, not resumed over.
    ops = config["ops"]
    resample = {**config, "ops": {"solutions": {"config": {**ops["solutions"]["config"], "seed": 1}},
                                  "rollouts": ops["rollouts"], "mc_labels": ops["mc_labels"]}}
    chain = [dg.AssetKey("solutions"), dg.AssetKey("rollouts"), *labels]  # mc_labels runs after rollouts
    third = job.execute_in_process(partition_key=partition_key(REFRESH_DAY, "arith"), instance=instance,
                                   run_config=resample, asset_selection=chain,
                                   raise_on_error=False)
    assert third.success
    meta = third.asset_materializations_for_node("mc_labels")[0].metadata
    assert meta["labeled_solutions"].value == 8 and meta["skipped_already_labeled"].value == 0
    stale = con.execute("SELECT count(*) FROM step_labels l JOIN solutions s USING (solution_id) "
                        "WHERE l.method = 'mc' AND l.created_at < s.created_at").fetchall()[0][0]
    orphans = con.execute("SELECT count(*) FROM step_labels l ANTI JOIN solutions s USING (solution_id) "
                          "WHERE l.method = 'mc'").fetchall()[0][0]
    assert stale == 0 and orphans == 0
