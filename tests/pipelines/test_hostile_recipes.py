"""Hostile recipes and sidecars: each is refused in one line per problem (all problems in one message), with no
traceback and no partial run config, and the inbox sensor's tick still requests the good files beside the bad ones.
In-process for the table; the CLI's --dry-run runs as a subprocess for two cases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from assets.resources import GenerationResource
from pipelines.flywheel import main as flywheel_main
from pipelines.recipe import RecipeError, load_recipe
from pipelines.sensors import inbox_sensor
from warehouse.config import PROJECT_ROOT

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))
DEEP = "policy:\n" + "".join("  " * i + "  a:\n" for i in range(1, 400))

# (recipe text, what its message says): each row one hostile recipe.
HOSTILE: list[tuple[str | bytes, str]] = [
    # the YAML itself
    ("[" * 50_000, "nests deeper than"),
    (DEEP, "nests deeper than"),
    ("sampling: " + "{n: " * 3000 + "1" + "}" * 3000, "nests deeper than"),
    (BOMB, "aliases expand the data to more than"),
    ("&a [*a]", "recursive structure"),
    ("sampling: {n: 2}\nsampling: {n: 3}\n", "the key 'sampling' appears twice"),
    ("sampling:\n  n: 2\n  n: 4\n", "the key 'n' appears twice"),
    ("rl: {run: yes}", "'yes' is a boolean in YAML 1.1"),
    ("rl: {run: on}", "'on' is a boolean in YAML 1.1"),
    ("rl: {run: NO}", "'NO' is a boolean in YAML 1.1"),
    (b"name: \xff\xfe\n", "not UTF-8 text"),
    (b"\xff\xfen\x00a\x00", "not UTF-8 text"),
    ("name: a\x00b", "special characters are not allowed"),
    ("sampling: {n: 2", "fix the YAML"),
    ("a: 1\n---\nb: 2\n", "expected a single document"),
    ("!!python/object/apply:os.system [echo]", "could not determine a constructor"),
    ("sampling: {n: " + "9" * 4400 + "}", "an integer of 4400 characters"),
    ("x: " + "y" * (1 << 20), "larger than the 1,048,576 bytes"),
    ("- a\n- b\n", "holds a YAML list; a recipe is a mapping"),
    ("just text", "holds a YAML str"),
    # numbers that cannot run
    ("sampling: {temperature: .nan}", "sampling.temperature=nan must be finite"),
    ("sampling: {temperature: .inf}", "sampling.temperature=inf must be finite"),
    ("sampling: {temperature: -.inf}", "sampling.temperature=-inf must be finite"),
    ("sampling: {temperature: 1000.0}", "sampling.temperature=1000.0 must be in [0, 10]"),
    ("sampling: {top_p: .nan}", "sampling.top_p=nan must be finite"),
    ("policy: {kv_cache_gib: -5}", "policy.kv_cache_gib=-5.0 must be in (0, 1024]"),
    ("policy: {kv_cache_gib: .nan}", "policy.kv_cache_gib=nan must be finite"),
    ("policy: {kv_cache_gib: 1000000000000000000000000000000}", "policy.kv_cache_gib=1e+30 must be in (0, 1024]"),
    (f"sampling: {{n: {10**30}}}", f"sampling.n={10**30} must be in [1, 4096]"),
    ("sampling: {n: 0}", "sampling.n=0 must be in [1, 4096]"),
    ("sampling: {n: 2.5}", "sampling.n is 2.5, a float; give a whole number"),
    (f"sampling: {{max_tokens: {10**12}}}", "sampling.max_tokens=1000000000000 must be in [1, 1048576]"),
    (f"labels: {{rollouts: {10**9}}}", "labels.rollouts=1000000000 must be in [1, 1024]"),
    (f"labels: {{omegaprm_k: {10**9}}}", "labels.omegaprm_k=1000000000 must be in [1, 1024]"),
    ("labels: {judge_votes: -3}", "labels.judge_votes=-3 must be in [1, 1024]"),
    (f"prm: {{max_steps: {10**12}}}", "prm.max_steps=1000000000000 must be in [1, 10000000]"),
    (f"prm: {{batch_size: {10**9}}}", "prm.batch_size=1000000000 must be in [1, 65536]"),
    (f"rl: {{steps: {10**12}}}", "rl.steps=1000000000000 must be in [1, 10000000]"),
    (f"policy: {{max_model_len: {10**12}}}", "policy.max_model_len=1000000000000 must be in [1, 1048576]"),
    (f"dataset: {{limit: {10**30}}}", f"dataset.limit={10**30} must be in [1, 10000000]"),
    ("sampling: {seed: -1}", "sampling.seed=-1 must be in [0, 4294967295]"),
    (f"sampling: {{seed: {2**70}}}", f"sampling.seed={2**70} must be in [0, 4294967295]"),
    ("checks: {max_no_answer_share: .nan}", "checks.max_no_answer_share=nan must be finite"),
    ("checks: {min_correct: -1}", "checks.min_correct=-1 must be in [0,"),
    ("policy: {max_model_len: 512}\nsampling: {max_tokens: 512}", "leaves no room for the question"),
    # typos and wrong kinds
    ("sampling: {temprature: 0.7}", "sampling.temprature is not a recipe field"),
    ("sampler: {n: 2}", "sampler is not a recipe section"),
    ("rl: {run: 'yes'}", "rl.run is 'yes', a str; give true or false"),
    ("name: [a, b]", "name is a list of 2, a list; give text"),
    ("sampling: {stop: {a: 1}}", "sampling.stop must be a list of strings"),
    ("labels: {methods: [mc, sympy]}", "labels.methods ['sympy'] are not labelers"),
    ("prm: {head: mlp}", "prm.head 'mlp' is unknown"),
    ("policy: {backend: tensorrt}", "policy.backend 'tensorrt' is unknown"),
    ("dataset: {source: '../etc'}", "cannot name a partition"),
]


def _write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "hostile.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    return path


def _assert_lines(exc: RecipeError) -> None:
    message = str(exc)
    assert "Traceback" not in message and len(exc.problems) == max(1, message.count("\n"))
    assert all(len(line) <= 500 for line in message.splitlines())
    assert "\n" not in exc.one_line()


@pytest.mark.parametrize(("text", "says"), HOSTILE, ids=[f"{i:02d}" for i in range(len(HOSTILE))])
def test_a_hostile_recipe_is_refused_in_one_line(tmp_path: Path, text: str | bytes, says: str) -> None:
    with pytest.raises(RecipeError) as info:  # only a RecipeError: no RecursionError, MemoryError, ValueError
        load_recipe(_write(tmp_path, text))
    assert says in str(info.value), str(info.value)
    _assert_lines(info.value)


def test_paths_that_are_no_recipe_file_are_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "dir.yaml").mkdir()
    (tmp_path / "loop.yaml").symlink_to(tmp_path / "loop.yaml")
    (tmp_path / "dangling.yaml").symlink_to(tmp_path / "nowhere.yaml")
    os.mkfifo(tmp_path / "fifo.yaml")
    (tmp_path / "dev.yaml").symlink_to("/dev/zero")
    for name, says in (("dir.yaml", "is a directory"), ("loop.yaml", "cannot be opened"),
                       ("dangling.yaml", "does not exist"), ("fifo.yaml", "not a regular file"),
                       ("dev.yaml", "not a regular file")):
        with pytest.raises(RecipeError, match=says) as info:
            load_recipe(tmp_path / name)
        _assert_lines(info.value)


def test_every_problem_is_reported_at_once_one_line_each(tmp_path: Path) -> None:
    text = ("sampling: {temperature: .nan, n: 100000000000, seed: -1, temprature: 1}\n"
            "policy: {kv_cache_gib: -5}\nlabels: {rollouts: 1000000000}\nsampler: {}\n")
    with pytest.raises(RecipeError) as info:
        load_recipe(_write(tmp_path, text))
    lines = str(info.value).splitlines()
    assert lines[0].endswith("has 7 problems:") and len(info.value.problems) == 7
    for key in ("sampling.temperature=nan", "sampling.n=100000000000", "sampling.seed=-1", "sampling.temprature",
                "policy.kv_cache_gib=-5.0", "labels.rollouts=1000000000", "sampler is not a recipe section"):
        assert sum(key in line for line in lines[1:]) == 1, key


def test_the_shipped_recipes_still_fit_every_bound() -> None:
    for path in sorted((PROJECT_ROOT / "recipes").rglob("*.yaml")):
        load_recipe(path)  # raises on any bound a shipped recipe breaks


# --- the inbox sensor: bad sidecars are refused for their own file; the good file is still requested -------------

GOOD = "policy: {model: smollm2-135m-instruct}\nsampling: {n: 2}\n"
ROW = json.dumps({"question": "Tom has 2 apples and buys 3. How many?", "answer": "2+3=5\n#### 5"}) + "\n"
BAD_SIDECARS: dict[str, str | bytes] = {
    "deep": DEEP, "bomb": BOMB, "dup": "sampling: {n: 2, n: 3}", "nan": "sampling: {temperature: .nan}",
    "huge": f"sampling: {{n: {10**30}}}", "yes": "rl: {run: yes}", "binary": b"\xff\xfe\x00",
    "typo": "sampling: {temprature: 0.7}",
}


def _tick(instance, resource, cursor: str | None = None) -> dg.SensorResult:
    resources = {"warehouse": resource, "generation": GenerationResource()}
    with dg.build_sensor_context(instance=instance, cursor=cursor, resources=resources) as context:
        return inbox_sensor(context)


def test_the_sensor_requests_the_good_file_beside_bad_sidecars(instance, resource) -> None:
    inbox = resource.inbox_path()
    (inbox / "good.jsonl").write_text(ROW)
    (inbox / "good.yaml").write_text(GOOD)
    for name, text in BAD_SIDECARS.items():
        (inbox / f"{name}.jsonl").write_text(ROW)
        (inbox / f"{name}.yaml").write_bytes(text if isinstance(text, bytes) else text.encode())
    (inbox / "dirside.jsonl").write_text(ROW)
    (inbox / "dirside.yaml").mkdir()  # a directory where the sidecar goes
    (inbox / "linkside.jsonl").write_text(ROW)
    (inbox / "linkside.yaml").symlink_to(inbox / "linkside.yaml")  # a symlink loop
    result = _tick(instance, resource)
    assert [r.partition_key.keys_by_dimension["source"] for r in result.run_requests] == ["good"]
    refused = json.loads(result.cursor)["refused"]
    assert sorted(refused) == sorted(f"{n}.jsonl" for n in (*BAD_SIDECARS, "dirside", "linkside"))
    for name, message in refused.items():
        assert message.startswith(f"ignoring {name}: ") and "\n" not in message and len(message) < 700, message

    # With only bad files left, the skip reason is the refusals, one line.
    (inbox / "good.jsonl").unlink()
    (inbox / "good.yaml").unlink()
    again = _tick(instance, resource)
    assert again.run_requests == [] and "\n" not in again.skip_reason.skip_message
    assert "nests deeper than" in again.skip_reason.skip_message


# --- the CLI and the flywheel, as users run them --------------------------------------------------------------------

def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=PROJECT_ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "OMP_NUM_THREADS": "1", **env})


@pytest.mark.parametrize(("text", "says"), [
    (BOMB, "aliases expand"),
    ("sampling: {temperature: .nan, n: 1000000000000000000000000000000}\nrl: {prm: shiped}\n", "has 2 problems:"),
])
def test_the_dry_run_refuses_in_lines_without_a_partial_table(tmp_path: Path, text: str, says: str) -> None:
    path = _write(tmp_path, text)
    env = {"PRM_INBOX": str(tmp_path / "inbox"), "PRM_MODEL_CACHE": str(tmp_path / "models"), "HF_HUB_OFFLINE": "1"}
    done = _cli("pipelines.cli", "run", str(path), "--dry-run", env=env)
    assert done.returncode == 1 and done.stdout == "", done.stdout  # no partial run config
    assert done.stderr.startswith("Error: recipe ") and says in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


HUB = "policy: {model: Qwen/Qwen2.5-Math-1.5B-Instruct}\n"  # a hub id: resolved without reading any weights


@pytest.mark.parametrize(("text", "problems"), [
    (HUB + "rl: {prm: shiped}\n", ["rl.prm 'shiped' is neither 'trained' nor 'shipped' nor 'arith-prm' nor a PRM "
                                   "folder; did you mean 'shipped'?"]),
    (HUB + "rl: {prm: arith-prm}\n", []),
    (HUB + "rl: {prm: /etc}\n", ["rl.prm '/etc' is a folder without config.json, so not a PRM folder; give the "
                                 "folder a PRM was saved to (the one holding config.json and the weights)"]),
    (HUB + "rl: {prm: shipped}\n", []),
    ("policy: {model: smolm2-135m-instruct}\nprm: {base_model: Qwen/Qwen2.5-Math-1.5B-Instruct}\n"
     "rl: {policy: Qwen/Qwen2.5-Math-1.5B-Instruct}\nsearch: {policy: Qwen/Qwen2.5-Math-1.5B-Instruct}\n",
     ["policy.model 'smolm2-135m-instruct': model 'smolm2-135m-instruct' is neither a registered name"]),
])
def test_models_and_the_reward_prm_resolve_at_the_dry_run(tmp_path: Path, text: str, problems: list[str]) -> None:
    from pipelines.recipe_models import model_report

    found = model_report(load_recipe(_write(tmp_path, text)))[1]
    assert len(found) == len(problems) and all(f.startswith(p) for f, p in zip(found, problems, strict=True)), found
    if "smolm2" in text:
        assert found[0].endswith("did you mean 'smollm2-135m-instruct'?")


@pytest.mark.parametrize(("config", "says"), [
    ({"prm_tolerance": float("nan")}, "prm_tolerance=nan must be finite"),
    ({"collapse_tolerance": float("inf")}, "collapse_tolerance=inf must be finite"),
    ({"hacking_band": -1.0}, "hacking_band=-1.0 must be in (0, inf)"),
])
def test_the_flywheel_refuses_a_bad_setting_in_one_line(project_home: Path, config: dict, says: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--config", json.dumps({"resources": {"flywheel": {"config": config}}})]
    assert flywheel_main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: resources.flywheel.config: ") and says in err and err.count("\n") == 1, err
