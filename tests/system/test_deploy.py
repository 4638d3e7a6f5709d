"""Deployment files, checked offline: hadolint, kubernetes-validate --strict, alert rules, the wheel."""

import copy
import hashlib
import json
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from service.api import metrics

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
BASE = DEPLOY / "k8s" / "base"
PRODUCTION = DEPLOY / "k8s" / "overlays" / "production"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(path.read_text())
    return loaded


def merge(base: Any, patch: Any) -> Any:
    """Strategic merge for the subset the overlay uses: maps merge, lists of named maps merge by name."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for key, value in patch.items():
            out[key] = merge(base[key], value) if key in base else value
        return out
    if (
        isinstance(base, list)
        and isinstance(patch, list)
        and all(isinstance(i, dict) and "name" in i for i in base + patch)
    ):
        out_list = [dict(i) for i in base]
        for item in patch:
            match = next((k for k, b in enumerate(out_list) if b["name"] == item["name"]), None)
            if match is None:
                out_list.append(item)
            else:
                out_list[match] = merge(out_list[match], item)
        return out_list
    return copy.deepcopy(patch)


def _generated_config_maps(directory: Path, kustomization: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """configMapGenerator: one ConfigMap per entry, its name suffixed with a hash of its data."""
    made = {}
    for entry in kustomization.get("configMapGenerator", []):
        data = {Path(f).name: (directory / f).read_text("utf-8") for f in entry["files"]}
        suffix = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:10]
        made[entry["name"]] = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"{entry['name']}-{suffix}"},
            "data": data,
        }
    return made


def render(directory: Path) -> list[dict[str, Any]]:
    """What `kustomize build` gives for our base and overlay (resources, generated ConfigMaps with the
    references to them renamed, namespace, images, patches)."""
    kustomization = load(directory / "kustomization.yaml")
    objects: list[dict[str, Any]] = []
    for resource in kustomization.get("resources", []):
        path = directory / resource
        objects.extend(render(path) if path.is_dir() else [load(path)])
    generated = _generated_config_maps(directory, kustomization)
    objects.extend(generated.values())
    for patch_entry in kustomization.get("patches", []):
        patch = load(directory / patch_entry["path"])
        for k, obj in enumerate(objects):
            if (obj["kind"], obj["metadata"]["name"]) == (patch["kind"], patch["metadata"]["name"]):
                objects[k] = merge(obj, patch)
    for obj in objects:
        for volume in obj.get("spec", {}).get("template", {}).get("spec", {}).get("volumes", []):
            if "configMap" in volume and volume["configMap"]["name"] in generated:
                volume["configMap"]["name"] = generated[volume["configMap"]["name"]]["metadata"]["name"]
    for image in kustomization.get("images", []):
        for obj in objects:
            for container in obj.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
                if container["image"].split(":")[0] == image["name"]:
                    container["image"] = f"{image['newName']}:{image['newTag']}"
    if "namespace" in kustomization:
        for obj in objects:
            obj["metadata"]["namespace"] = kustomization["namespace"]
    return objects


def test_hadolint_is_clean() -> None:
    hadolint = Path(sys.executable).with_name("hadolint")
    done = subprocess.run([str(hadolint), str(DEPLOY / "Dockerfile")], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_dockerfile_shape() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert len(re.findall(r"^FROM python:3\.\d+-slim AS \w+", text, flags=re.M)) == 2  # multi-stage, slim
    assert re.search(r"^USER 10001:10001$", text, flags=re.M)
    assert re.search(r'^CMD \["maubinh", "serve"\]$', text, flags=re.M)  # exec form
    assert re.search(r"^HEALTHCHECK ", text, flags=re.M)
    assert f"maubinh=={VERSION}" in text  # installs the wheel just built, nothing else


def test_the_wheel_carries_the_package_data(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)], check=True
    )
    (wheel,) = tmp_path.glob("maubinh-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for expected in (
        "service/openapi.yaml",
        "service/data/field-second.npz",
        "service/data/field-lowest.npz",
        "service/rulesets/schema.json",
        "service/rulesets/builtin/maubinh-chi-at/1.json",
        "service/rulesets/builtin/maubinh-chi-at/2.json",
        "service/gunicorn_config.py",
    ):
        assert expected in names
    assert zipfile.ZipFile(wheel).read("service/openapi.yaml") == (ROOT / "openapi.yaml").read_bytes()
    compiled = {n.split(".")[0] for n in names if n.endswith(".so")}
    scoring = {f"service/scoring/{m}" for m in ("__init__", "results", "evaluation", "stages")}
    assert scoring | {"service/serialize", "service/hands", "service/patterns"} <= compiled  # mypyc (setup.py)


@pytest.mark.parametrize("overlay", [BASE, PRODUCTION], ids=["base", "production"])
def test_every_rendered_object_passes_kubernetes_validate_strict(overlay: Path) -> None:
    version = kubernetes_validate.latest_version()
    kinds = []
    for obj in render(overlay):
        kinds.append(obj["kind"])
        if obj["kind"] == "ServiceMonitor":
            continue  # no schema for the CRD: checked structurally below
        kubernetes_validate.validate(obj, version, strict=True)
    assert sorted(kinds) == [
        *(["ConfigMap"] if overlay == PRODUCTION else []),
        "Deployment",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "Service",
        "ServiceMonitor",
    ]


def test_the_base_lists_every_manifest_in_its_folder() -> None:
    listed = set(load(BASE / "kustomization.yaml")["resources"])
    assert listed == {p.name for p in BASE.glob("*.yaml")} - {"kustomization.yaml"}


def _deployment(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == "Deployment")


@pytest.mark.parametrize("overlay", [BASE, PRODUCTION], ids=["base", "production"])
def test_deployment_is_production_shaped(overlay: Path) -> None:
    deployment = _deployment(render(overlay))
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    env = {e["name"]: e for e in container["env"]}
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes[mounts["/tmp"]]
    assert "emptyDir" in volumes[mounts[env["PROMETHEUS_MULTIPROC_DIR"]["value"]]]
    assert env["MAUBINH_WORKERS"]["valueFrom"]["resourceFieldRef"]["resource"] == "requests.cpu"
    graceful = int(env["MAUBINH_GRACEFUL_TIMEOUT"]["value"])
    pre_stop = container["lifecycle"]["preStop"]["sleep"]["seconds"]
    assert pod["terminationGracePeriodSeconds"] > graceful + pre_stop
    for kind in ("requests", "limits"):
        assert {"cpu", "memory"} <= set(container["resources"][kind])
    assert container["ports"][0]["containerPort"] == 8000


def test_production_overlay_applies() -> None:
    objects = render(PRODUCTION)
    deployment = _deployment(objects)
    assert deployment["metadata"]["namespace"] == "maubinh" and deployment["spec"]["replicas"] == 3
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == f"registry.example.com/games/maubinh:{VERSION}"
    assert container["resources"]["requests"]["cpu"] == "4"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"  # the patch merged, not replaced
    hpa = next(o for o in objects if o["kind"] == "HorizontalPodAutoscaler")
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (3, 30)


def test_production_mounts_the_operator_s_rulesets_and_they_check(tmp_path: Path) -> None:
    """The overlay's ConfigMap holds the example variant, mounted where MAUBINH_RULESETS_DIR points;
    every file in it passes `maubinh rulesets check`, as an operator's CI would run it."""
    objects = render(PRODUCTION)
    config_map = next(o for o in objects if o["kind"] == "ConfigMap")
    container = _deployment(objects)["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    mount = next(m for m in container["volumeMounts"] if m["name"] == "rulesets")
    assert env["MAUBINH_RULESETS_DIR"] == mount["mountPath"] and mount["readOnly"]
    volume = next(v for v in _deployment(objects)["spec"]["template"]["spec"]["volumes"] if v["name"] == "rulesets")
    assert volume["configMap"]["name"] == config_map["metadata"]["name"]
    for name, text in config_map["data"].items():
        (tmp_path / name).write_text(text, "utf-8")
    checked = subprocess.run(
        [str(Path(sys.executable).with_name("maubinh")), "rulesets", "check", *sorted(map(str, tmp_path.iterdir()))],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr
    assert "ok club-hanoi sha256:" in checked.stdout


def test_hpa_pdb_and_service_monitor() -> None:
    objects = {o["kind"]: o for o in render(BASE)}
    hpa = objects["HorizontalPodAutoscaler"]
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["metrics"][0]["resource"]["name"] == "cpu"
    assert hpa["spec"]["scaleTargetRef"]["name"] == objects["Deployment"]["metadata"]["name"]
    assert objects["PodDisruptionBudget"]["spec"]["selector"] == objects["Deployment"]["spec"]["selector"]
    monitor = objects["ServiceMonitor"]
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["spec"]["selector"]["matchLabels"].items() <= objects["Service"]["metadata"]["labels"].items()
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["path"] == "/metrics"
    assert endpoint["port"] in {p["name"] for p in objects["Service"]["spec"]["ports"]}
    assert re.fullmatch(r"\d+s", endpoint["interval"]) and re.fullmatch(r"\d+s", endpoint["scrapeTimeout"])


EXPOSED = {
    m._name + suffix
    for m in (metrics.REQUESTS, metrics.LATENCY, metrics.ROOMS, metrics.FOULS, metrics.INSTANT_WINS, metrics.REJECTED)
    for suffix in ("_total", "_bucket", "_count", "_sum", "")
}


def test_alert_rules_parse_and_name_real_metrics() -> None:
    rules = load(DEPLOY / "prometheus" / "alerts.yaml")["groups"][0]["rules"]
    assert {r["alert"] for r in rules} >= {"MaubinhErrorRatioHigh", "MaubinhScoreLatencyHigh", "MaubinhNoScrapes"}
    for rule in rules:
        expr = rule["expr"]
        assert expr.count("(") == expr.count(")") and expr.count("{") == expr.count("}")
        assert re.fullmatch(r"\d+[smh]", rule["for"])
        assert rule["labels"]["severity"] in {"page", "ticket"}
        assert {"summary", "description", "runbook"} <= set(rule["annotations"])
        for name in re.findall(r"\b(maubinh_[a-z_]+)", expr):
            assert name in EXPOSED, f"{rule['alert']} uses {name}, which the service does not export"
