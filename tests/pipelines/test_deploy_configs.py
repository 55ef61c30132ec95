"""deploy/: the cluster configs parse, pass Dagster's own validation where it has one, and agree with the code
and with each other (the instance file and the Helm values, the fleet and the run config that points at it)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from urllib.parse import urlparse

import dagster as dg
import pytest
import yaml
from dagster._core.instance.config import dagster_instance_config

from assets.resources import GenerationResource
from pipelines.definitions import defs
from warehouse.location import normalize

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
PYPROJECT = DEPLOY.parent / "pyproject.toml"
# Keys of dagster_k8s.K8sRunLauncher's config and of its run_k8s_config / `dagster-k8s/config` tag, as the
# official Helm chart writes them (helm/dagster/templates/helpers/instance/_run-launcher.tpl): a typo in a
# key is silently ignored by YAML, and dagster-k8s is not installed here to validate them.
K8S_RUN_LAUNCHER_KEYS = {
    "load_incluster_config", "kubeconfig_file", "job_namespace", "image_pull_policy", "image_pull_secrets",
    "service_account_name", "job_image", "dagster_home", "instance_config_map", "postgres_password_secret",
    "env_config_maps", "env_secrets", "env_vars", "volume_mounts", "volumes", "labels", "resources",
    "fail_pod_on_run_failure", "scheduler_name", "security_context", "run_k8s_config",
}
K8S_CONFIG_KEYS = {"container_config", "pod_spec_config", "pod_template_spec_metadata", "job_spec_config",
                   "job_metadata", "merge_behavior"}


def _load(name: str) -> dict:
    return yaml.safe_load((DEPLOY / name).read_text())


def _fleet() -> tuple[dict, dict]:
    """The fleet's (Service, StatefulSet)."""
    docs = {d["kind"]: d for d in yaml.safe_load_all((DEPLOY / "vllm-fleet.yaml").read_text())}
    return docs["Service"], docs["StatefulSet"]


def _pools() -> set[str]:
    """Pools the code's steps declare."""
    return {n.definition.pool for job in defs.resolve_all_job_defs() for n in job.graph.nodes} - {None}


@pytest.mark.parametrize("name", sorted(p.name for p in DEPLOY.glob("*.yaml")))
def test_every_deploy_file_parses(name: str) -> None:
    docs = list(yaml.safe_load_all((DEPLOY / name).read_text()))
    assert docs and all(isinstance(d, dict) for d in docs)


def test_the_instance_config_passes_dagsters_validation_and_launches_runs_on_kubernetes() -> None:
    # Dagster's own check of a dagster.yaml (private API: the public one instantiates the launcher, and
    # dagster-k8s is not installed here). Raises on an unknown or conflicting key.
    config, _ = dagster_instance_config(str(DEPLOY), "dagster.yaml")
    launcher = config["run_launcher"]
    assert (launcher["module"], launcher["class"]) == ("dagster_k8s", "K8sRunLauncher")
    assert set(launcher["config"]) <= K8S_RUN_LAUNCHER_KEYS
    assert set(launcher["config"]["run_k8s_config"]) <= K8S_CONFIG_KEYS
    assert set(config["storage"]) == {"postgres"}
    assert config["run_coordinator"]["class"] == "QueuedRunCoordinator"
    assert config["concurrency"]["pools"] == {"default_limit": 1, "granularity": "op"}
    assert config["concurrency"]["runs"]["max_concurrent_runs"] > 1  # partitions run in parallel


def test_the_helm_values_give_the_same_instance_and_serve_this_code_location() -> None:
    values, instance = _load("values.yaml"), _load("dagster.yaml")
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    (deployment,) = values["dagster-user-deployments"]["deployments"]
    module = tomllib.loads(PYPROJECT.read_text())["tool"]["dagster"]["module_name"]
    assert deployment["dagsterApiGrpcArgs"] == ["-m", module]
    env = {e["name"]: e["value"] for e in deployment["env"]}
    assert normalize(env["PRM_DATA_ROOT"]).startswith("s3://")  # the warehouse: Delta tables on S3
    mounts = [m["mountPath"] for m in deployment["volumeMounts"]]
    assert all(any(env[k].startswith(m + "/") for m in mounts) for k in ("PRM_INBOX", "PRM_MODEL_CACHE"))
    # The chart renders these into the instance: they must say what deploy/dagster.yaml says.
    runs, pools = values["concurrency"]["runs"], values["concurrency"]["pools"]
    assert runs["maxConcurrentRuns"] == instance["concurrency"]["runs"]["max_concurrent_runs"]
    assert runs["tagConcurrencyLimits"] == instance["concurrency"]["runs"]["tag_concurrency_limits"]
    pools = {"default_limit": pools["defaultLimit"], "granularity": pools["granularity"]}
    assert pools == instance["concurrency"]["pools"]
    monitoring = values["dagsterDaemon"]["runMonitoring"]
    assert monitoring["maxResumeRunAttempts"] == instance["run_monitoring"]["max_resume_run_attempts"]
    k8s = values["runLauncher"]["config"]["k8sRunLauncher"]["runK8sConfig"]["containerConfig"]
    assert k8s == instance["run_launcher"]["config"]["run_k8s_config"]["container_config"]


def test_the_readme_sets_a_limit_for_every_pool_the_code_declares() -> None:
    readme = (DEPLOY / "README.md").read_text()
    assert _pools() == {"engine", "rl"}
    for pool in _pools():
        assert f"dagster instance concurrency set {pool} " in readme, pool


def test_gpu_run_tags_name_real_jobs_and_valid_k8s_config_keys() -> None:
    tags = _load("run-tags.yaml")
    jobs = {job.name for job in defs.resolve_all_job_defs()}
    assert set(tags) <= jobs and "refresh" in tags
    for job, job_tags in tags.items():
        k8s = job_tags["dagster-k8s/config"]
        assert set(k8s) <= K8S_CONFIG_KEYS, job
        assert k8s["container_config"]["resources"]["limits"]["nvidia.com/gpu"] == 1, job


def test_the_fleet_serves_the_openai_api_and_is_ready_when_the_backends_probe_answers() -> None:
    service, fleet = _fleet()
    (container,) = fleet["spec"]["template"]["spec"]["containers"]
    assert container["command"][-2:] == ["-m", "vllm.entrypoints.openai.api_server"]
    flags = dict(arg.removeprefix("--").partition("=")[::2] for arg in container["args"])
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert fleet["spec"]["replicas"] > 1
    assert container["readinessProbe"]["httpGet"]["path"] == "/v1/models"

    run_config = _load("fleet-run-config.yaml")
    generation = run_config["resources"]["generation"]["config"]
    assert generation["model"] == flags["model"]
    # One URL per replica, at its stable name, on the port the server listens on; the backend probes
    # `<base_url>/models`, which is the readiness path.
    name, namespace = fleet["metadata"]["name"], urlparse(generation["base_urls"][0]).hostname.split(".")[2]
    assert service["spec"]["clusterIP"] == "None" and fleet["spec"]["serviceName"] == service["metadata"]["name"]
    expected = [f"{name}-{i}.{service['metadata']['name']}.{namespace}.svc.cluster.local"
                for i in range(fleet["spec"]["replicas"])]
    urls = [urlparse(u) for u in generation["base_urls"]]
    assert [u.hostname for u in urls] == expected
    assert {u.port for u in urls} == {int(flags["port"])}
    assert {u.path + "/models" for u in urls} == {container["readinessProbe"]["httpGet"]["path"]}


def test_the_fleet_run_config_is_valid_for_the_refresh_job() -> None:
    run_config = _load("fleet-run-config.yaml")
    dg.validate_run_config(defs.resolve_job_def("refresh"), run_config)  # raises on an unknown or mistyped field
    generation = run_config["resources"]["generation"]["config"]
    config = GenerationResource(**generation).config()  # GenerationConfig checks base_urls against base_url
    assert config.backend == "openai" and config.base_urls == tuple(generation["base_urls"])
