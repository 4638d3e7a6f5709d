"""Deployment files, checked offline: hadolint, kubernetes-validate --strict, alert rules, the wheel."""

import base64
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from service.api import metrics
from service.api.config import Settings
from service.trust import callers

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
BASE = DEPLOY / "k8s" / "base"
PRODUCTION = DEPLOY / "k8s" / "overlays" / "production"
MONITORING = DEPLOY / "k8s" / "components" / "monitoring"
CALLERS = DEPLOY / "k8s" / "components" / "callers"
QUOTAS = DEPLOY / "k8s" / "components" / "quotas"
SIGNING = DEPLOY / "k8s" / "components" / "signing"
TOOLS = ROOT / ".tools"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(path.read_text())
    return loaded


def render(directory: Path) -> list[dict[str, Any]]:
    """What `kubectl apply -k` sends: kubectl's own kustomize build."""
    if shutil.which("kubectl") is None:
        pytest.fail("kubectl is needed to render the manifests (kubectl kustomize)")
    built = subprocess.run(["kubectl", "kustomize", str(directory)], capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    return [obj for obj in yaml.safe_load_all(built.stdout) if obj]


def with_monitoring(tmp_path: Path, overlay: Path) -> Path:
    """The overlay with the optional monitoring component turned on, as an operator turns it on."""
    return with_components(tmp_path, overlay, MONITORING)


def with_components(tmp_path: Path, overlay: Path, *components: Path) -> Path:
    """The overlay with optional components turned on, as an operator turns them on: a copy of
    deploy/k8s whose kustomization lists them."""
    copy = tmp_path / "k8s"
    shutil.copytree(DEPLOY / "k8s", copy)
    copied = copy / overlay.relative_to(DEPLOY / "k8s")
    kustomization = load(copied / "kustomization.yaml")
    kustomization["components"] = [os.path.relpath(copy / c.relative_to(DEPLOY / "k8s"), copied) for c in components]
    (copied / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    return copied


@pytest.mark.parametrize(
    "dockerfile", [DEPLOY / "Dockerfile", DEPLOY / "spark" / "Dockerfile"], ids=["service", "spark"]
)
def test_hadolint_is_clean(dockerfile: Path) -> None:
    hadolint = Path(sys.executable).with_name("hadolint")
    done = subprocess.run([str(hadolint), str(dockerfile)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_dockerfile_shape() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert re.findall(r"^FROM (.+)$", text, flags=re.M) == ["python:3.11-slim"]  # deploy/base-image.sh tags it
    assert re.search(r"^USER 10001:10001$", text, flags=re.M)
    assert re.search(r'^CMD \["maubinh", "serve"\]$', text, flags=re.M)  # exec form
    assert re.search(r"^HEALTHCHECK ", text, flags=re.M)
    assert (
        f"--no-index --find-links=/wheels 'maubinh[otel]=={VERSION}'" in text
    )  # the wheels built outside, with traces
    assert not re.search(r"apt-get|gcc|pip wheel", text)  # no compiler, no download in the image
    assert (
        f"docker.io/library/{re.search(r'^FROM (.+)$', text, flags=re.M)[1]}" in (DEPLOY / "base-image.sh").read_text()
    )


def test_the_wheel_carries_the_package_data() -> None:
    """The wheel `make wheels` builds for the images and the installs (rebuilt if a source changed)."""
    built = subprocess.run(["make", "-C", str(ROOT), "wheels"], capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = (ROOT / "build" / "wheelhouse").glob("maubinh-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for expected in (
        "service/openapi.yaml",
        "service/data/field-second.npz",
        "service/data/field-lowest.npz",
        "service/rulesets/schema.json",
        "service/rulesets/builtin/maubinh-chi-at/1.json",
        "service/rulesets/builtin/maubinh-chi-at/2.json",
        "service/server/gunicorn_config.py",
    ):
        assert expected in names
    assert zipfile.ZipFile(wheel).read("service/openapi.yaml") == (ROOT / "openapi.yaml").read_bytes()
    compiled = {n.split(".")[0] for n in names if n.endswith(".so")}
    scoring = {
        f"service/scoring/{m}" for m in ("__init__", "results", "evaluation", "pairs", "settlement", "scoops", "aces")
    }
    assert (
        scoring | {"service/serialize", "service/game/hands", "service/game/hand_strengths", "service/game/patterns"}
        <= compiled
    )  # mypyc (setup.py)


KINDS = ["Deployment", "HorizontalPodAutoscaler", "PodDisruptionBudget", "Service"]


@pytest.mark.parametrize("overlay", [BASE, PRODUCTION], ids=["base", "production"])
def test_every_rendered_object_passes_kubernetes_validate_strict(overlay: Path) -> None:
    version = kubernetes_validate.latest_version()
    kinds = []
    for obj in render(overlay):
        kinds.append(obj["kind"])
        kubernetes_validate.validate(obj, version, strict=True)
    extra = ["ConfigMap", "Namespace", "Secret"] if overlay == PRODUCTION else []
    assert sorted(kinds) == sorted(KINDS + extra)  # nothing that needs a CRD unless the component is on


@pytest.mark.parametrize("overlay", [BASE, PRODUCTION], ids=["base", "production"])
def test_the_monitoring_component_validates_against_the_operator_s_crds(overlay: Path, tmp_path: Path) -> None:
    objects = render(with_monitoring(tmp_path, overlay))
    custom = [o for o in objects if o["apiVersion"] == "monitoring.coreos.com/v1"]
    assert sorted(o["kind"] for o in custom) == ["PrometheusRule", "ServiceMonitor"]
    for obj in objects:
        if obj not in custom:
            kubernetes_validate.validate(obj, kubernetes_validate.latest_version(), strict=True)
    if not (TOOLS / "node_modules" / "@kubernetes-models" / "prometheus-operator").is_dir():
        pytest.fail("the CRD validators are installed by `make tools`")
    script = Path(__file__).with_name("validate_custom_resources.mjs")
    checked = subprocess.run(
        ["node", str(script), str(TOOLS)], input=json.dumps(custom), capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("ok ") == 2
    broken = [{**o, "spec": {**o["spec"], "endpoints": "http"}} for o in custom if o["kind"] == "ServiceMonitor"]
    refused = subprocess.run(
        ["node", str(script), str(TOOLS)], input=json.dumps(broken), capture_output=True, text=True, check=False
    )
    assert refused.returncode == 1 and "FAIL ServiceMonitor" in refused.stdout  # the check can fail
    if overlay == PRODUCTION:
        assert {o["metadata"]["namespace"] for o in custom} == {"maubinh"}


def _monitoring_settings() -> dict[str, str]:
    lines = (MONITORING / "monitoring.env").read_text("utf-8").splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def test_the_monitoring_component_takes_its_runbook_base_and_release_label_from_one_file(tmp_path: Path) -> None:
    """Before: every runbook_url named a repository that exists nowhere, and no object carried the
    ``release`` label a kube-prometheus-stack Prometheus selects by, so it ignored them silently."""
    settings = _monitoring_settings()
    assert settings["prometheus_release"] == "kube-prometheus-stack"  # the chart's selector as its README installs it
    overlay = with_monitoring(tmp_path, PRODUCTION)
    env = overlay.parents[1] / "components" / "monitoring" / "monitoring.env"
    env.write_text(env.read_text("utf-8").replace(settings["runbook_base"], "https://wiki.club.vn/ops/maubinh")
                   .replace("=kube-prometheus-stack", "=prom"))  # fmt: skip
    objects = render(overlay)
    custom = [o for o in objects if o["apiVersion"] == "monitoring.coreos.com/v1"]
    assert {o["kind"]: o["metadata"]["labels"]["release"] for o in custom} == {
        "PrometheusRule": "prom",
        "ServiceMonitor": "prom",
    }
    [rule] = [o for o in custom if o["kind"] == "PrometheusRule"]
    urls = [r["annotations"]["runbook_url"] for g in rule["spec"]["groups"] for r in g["rules"] if "alert" in r]
    assert urls and all(url.startswith("https://wiki.club.vn/ops/maubinh#") for url in urls)
    assert all(
        o["kind"] != "ConfigMap" or o["metadata"]["name"] != "maubinh-monitoring" for o in objects
    )  # build-time only


def test_the_prometheus_rule_is_the_rules_file() -> None:
    rule = load(MONITORING / "prometheusrule.yaml")
    assert rule["spec"] == load(DEPLOY / "prometheus" / "alerts.yaml")
    sys.path.insert(0, str(ROOT / "scripts"))
    from prometheus_rule import prometheus_rule

    assert (MONITORING / "prometheusrule.yaml").read_text("utf-8") == prometheus_rule()  # regenerated


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
    # A bad rulesets folder leaves the pod alive and unready, as the runbook says: a startupProbe on
    # /readyz never passed, and the kubelet killed it in a loop (the pod-down alert, not the rulesets one).
    assert container["startupProbe"]["httpGet"]["path"] == "/healthz"
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
    namespace = next(o for o in objects if o["kind"] == "Namespace")["metadata"]["name"]
    assert {o["metadata"].get("namespace") for o in objects if o["kind"] != "Namespace"} == {namespace}
    assert deployment["spec"]["replicas"] == 3
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == f"registry.example.com/games/maubinh:{VERSION}"
    assert container["resources"]["requests"]["cpu"] == "4"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"  # the patch merged, not replaced
    hpa = next(o for o in objects if o["kind"] == "HorizontalPodAutoscaler")
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (3, 30)


def test_production_takes_its_api_keys_from_a_secret_and_refuses_the_placeholder() -> None:
    objects = render(PRODUCTION)
    secret = next(o for o in objects if o["kind"] == "Secret")
    container = _deployment(objects)["spec"]["template"]["spec"]["containers"][0]
    assert {"secretRef": {"name": secret["metadata"]["name"]}} in container["envFrom"]
    keys = base64.b64decode(secret["data"]["MAUBINH_API_KEYS"]).decode()
    env = {**os.environ, "MAUBINH_API_KEYS": keys, "MAUBINH_PORT": "1"}
    started = subprocess.run(
        [str(Path(sys.executable).with_name("maubinh")), "serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert started.returncode == 2 and "placeholder" in started.stderr  # as shipped, the pods say what to replace


def test_the_callers_and_quotas_components_validate_and_wire_the_pods(tmp_path: Path) -> None:
    """Callers from a Secret mounted as a folder (its updates reach the pods as file changes: no
    subPath, no hash suffix), and Redis for quotas at the URL the pods are given; the shipped callers
    file holds no caller, so no key works until the operator adds one."""
    objects = render(with_components(tmp_path, PRODUCTION, CALLERS, QUOTAS))
    version = kubernetes_validate.latest_version()
    for obj in objects:
        kubernetes_validate.validate(obj, version, strict=True)
    pods = _deployment(objects)["spec"]["template"]["spec"]
    container = pods["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    mount = next(m for m in container["volumeMounts"] if m["name"] == "callers")
    assert "subPath" not in mount and env["MAUBINH_CALLERS_FILE"] == mount["mountPath"] + "/callers.toml"
    secret = next(o for o in objects if o["kind"] == "Secret" and o["metadata"]["name"] == "maubinh-callers")
    assert next(v for v in pods["volumes"] if v["name"] == "callers")["secret"]["secretName"] == "maubinh-callers"
    shipped = tmp_path / "callers.toml"
    shipped.write_bytes(base64.b64decode(secret["data"]["callers.toml"]))
    assert callers.load(str(shipped)).callers == {}
    redis = next(o for o in objects if o["kind"] == "Service" and o["metadata"]["name"] == "maubinh-redis")
    assert (
        env["MAUBINH_QUOTA_REDIS_URL"] == f"redis://{redis['metadata']['name']}:{redis['spec']['ports'][0]['port']}/0"
    )
    assert Settings.from_env({k: v for k, v in env.items() if v is not None}).quota_redis_url is not None
    counted = next(o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "maubinh-redis")
    fence = next(o for o in objects if o["kind"] == "NetworkPolicy" and o["metadata"]["name"] == "maubinh-redis")
    assert (
        fence["spec"]["podSelector"]["matchLabels"].items() <= counted["spec"]["template"]["metadata"]["labels"].items()
    )
    (allowed,) = fence["spec"]["ingress"]
    admitted = [
        p["podSelector"]["matchLabels"].items()
        <= _deployment(objects)["spec"]["template"]["metadata"]["labels"].items()
        for p in allowed["from"]
    ]
    assert admitted == [True], "the service's pods alone may reach the counts"
    assert {o["kind"] for o in render(PRODUCTION)} >= {"Deployment"} and not any(
        o["metadata"]["name"].startswith(("maubinh-redis", "maubinh-callers")) for o in render(PRODUCTION)
    )  # the overlay works without them


def test_production_mounts_the_operator_s_rulesets_and_they_check(tmp_path: Path) -> None:
    """The overlay's ConfigMap holds the example's folder of versions and its lock, mounted where
    MAUBINH_RULESETS_DIR points; the folder passes `maubinh rulesets check`, every version locked."""
    objects = render(PRODUCTION)
    config_map = next(o for o in objects if o["kind"] == "ConfigMap")
    container = _deployment(objects)["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    mount = next(m for m in container["volumeMounts"] if m["name"] == "rulesets")
    assert env["MAUBINH_RULESETS_DIR"] == mount["mountPath"] and mount["readOnly"]
    volume = next(v for v in _deployment(objects)["spec"]["template"]["spec"]["volumes"] if v["name"] == "rulesets")
    assert volume["configMap"]["name"] == config_map["metadata"]["name"]
    paths = {item["key"]: item["path"] for item in volume["configMap"]["items"]}
    assert set(paths) == set(config_map["data"])  # every file mounted, at its place in the folder
    for key, text in config_map["data"].items():
        (tmp_path / paths[key]).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / paths[key]).write_text(text, "utf-8")
    checked = subprocess.run(
        [str(Path(sys.executable).with_name("maubinh")), "rulesets", "check", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.endswith(" locked\n") and "ok club-hanoi@1 sha256:" in checked.stdout
    assert "unlocked" not in checked.stdout  # the overlay ships its lock up to date


def test_hpa_pdb_and_service_monitor(tmp_path: Path) -> None:
    objects = {o["kind"]: o for o in render(with_monitoring(tmp_path, BASE))}
    hpa = objects["HorizontalPodAutoscaler"]
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["metrics"][0]["resource"]["name"] == "cpu"
    assert hpa["spec"]["scaleTargetRef"]["name"] == objects["Deployment"]["metadata"]["name"]
    assert objects["PodDisruptionBudget"]["spec"]["selector"] == objects["Deployment"]["spec"]["selector"]
    monitor = objects["ServiceMonitor"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= objects["Service"]["metadata"]["labels"].items()
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["path"] == "/metrics"
    assert endpoint["port"] in {p["name"] for p in objects["Service"]["spec"]["ports"]}


EXPOSED = {
    name + suffix
    for name in re.findall(r"^# TYPE (\S+) ", metrics.exposition()[0].decode(), re.M)
    for suffix in ("_total", "_bucket", "_count", "_sum", "")
}
"""Every name /metrics declares (its ``# TYPE`` lines), with the suffixes of its samples."""
RUNBOOK = ROOT / "docs" / "runbook.md"
RUNBOOK_URL = "https://runbooks.example.com/maubinh#"
"""The placeholder base of every runbook_url, which deploy/k8s/components/monitoring/monitoring.env sets."""


def _rules() -> list[dict[str, Any]]:
    return [rule for group in load(DEPLOY / "prometheus" / "alerts.yaml")["groups"] for rule in group["rules"]]


def _anchor(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    return re.sub(r"[^a-z0-9_ -]", "", heading.lower()).replace(" ", "-")


def test_alert_rules_name_real_metrics_and_link_their_runbook_section() -> None:
    """Every alert pages or opens a ticket and links its runbook section, which exists; the live
    check of the names is tests/system/test_monitoring.py's."""
    anchors = {_anchor(h) for h in re.findall(r"^## (.+)$", RUNBOOK.read_text(), re.M)}
    alerts = [r for r in _rules() if "alert" in r]
    assert {r["alert"] for r in alerts} >= {
        "MaubinhErrorBudgetBurn", "MaubinhErrorBudgetBurnSlow", "MaubinhRefusalsJumped", "MaubinhWorkersRestarting",
        "MaubinhTargetDown", "MaubinhNoScrapes",
    }  # fmt: skip
    for rule in alerts:
        assert re.fullmatch(r"\d+[smh]", rule["for"])
        assert rule["labels"]["severity"] in {"page", "ticket"}
        assert {"summary", "description", "runbook_url"} <= set(rule["annotations"])
        url = rule["annotations"]["runbook_url"]
        assert url.startswith(RUNBOOK_URL) and url.removeprefix(RUNBOOK_URL) in anchors, url
    assert _monitoring_settings()["runbook_base"] + "#" == RUNBOOK_URL
    for rule in _rules():
        for name in re.findall(r"\b(maubinh_[a-z_]+)", rule["expr"]):
            assert name in EXPOSED, f"{rule.get('alert') or rule['record']} uses {name}, which is not exported"


def test_the_slo_rules_are_the_slos() -> None:
    """Each SLO's recorded error ratio, at every window the alerts read, is slos.yaml's error query over
    its total query; its budget is 1 − the objective."""
    slos = load(DEPLOY / "prometheus" / "slos.yaml")["slos"]
    recorded = {(r["record"], r["labels"]["slo"]): " ".join(r["expr"].split()) for r in _rules() if "record" in r}
    for slo in slos:
        events = slo["sli"]["events"]
        for window in ("5m", "30m", "1h", "2h", "6h", "1d", "3d"):
            error, total = (
                " ".join(events[q].split()).replace("{{.window}}", window) for q in ("error_query", "total_query")
            )
            assert recorded[f"maubinh:slo_errors:ratio_rate{window}", slo["name"]] == f"({error}) / ({total})"
        budget = recorded["maubinh:slo_error_budget:ratio", slo["name"]]
        assert float(budget.removeprefix("vector(").removesuffix(")")) == pytest.approx(1 - slo["objective"] / 100)


def _promtool(*args: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("promtool") is None:
        pytest.fail("promtool is needed to check the alert rules (Debian: apt install prometheus)")
    return subprocess.run(["promtool", *args], capture_output=True, text=True, check=False, cwd=DEPLOY / "prometheus")


def test_promtool_checks_the_rules_and_their_tests_pass() -> None:
    """deploy/prometheus/alerts_test.yaml: a series that fires each alert, and one that does not."""
    checked = _promtool("check", "rules", "alerts.yaml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = _promtool("test", "rules", "alerts_test.yaml")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    tested_alerts = set(re.findall(r"alertname: (\w+)", (DEPLOY / "prometheus" / "alerts_test.yaml").read_text()))
    assert tested_alerts == {r["alert"] for r in _rules() if "alert" in r}


def test_the_dashboard_is_its_script_s_output_and_imports_as_it_stands() -> None:
    """A datasource variable and a caller one, no datasource uid written in, every panel on the grid with a
    query, and the usage panel a bar a day per caller (billing)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from grafana_dashboard import text

    path = DEPLOY / "grafana" / "maubinh.json"
    assert path.read_text("utf-8") == text(), "run scripts/grafana_dashboard.py"
    board = json.loads(path.read_text("utf-8"))
    datasource, caller = board["templating"]["list"]
    assert datasource["type"] == "datasource" and datasource["query"] == "prometheus"
    assert caller["name"] == "caller" and caller["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
    usage = next(p for p in board["panels"] if p["title"] == "Rooms scored per caller per day")
    assert usage["interval"] == "1d" and "[1d]" in usage["targets"][0]["expr"]
    assert usage["targets"][0]["expr"].startswith("sum by (caller) (increase(maubinh_rooms_scored_total")
    assert len({p["id"] for p in board["panels"]}) == len(board["panels"])
    for each in (p for p in board["panels"] if p["type"] != "row"):
        assert each["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert each["targets"] and all(t["datasource"] == each["datasource"] and t["expr"] for t in each["targets"])
        grid = each["gridPos"]
        assert grid["x"] + grid["w"] <= 24 and grid["h"] > 0


def test_the_docs_key_recipe_writes_a_usable_key_or_nothing(tmp_path: Path) -> None:
    """Before: the recipe wrote ``MAUBINH_API_KEYS=`` when openssl was missing, and the pods started open."""
    [recipe] = [
        line.strip()
        for line in (ROOT / "docs" / "deployment.md").read_text("utf-8").splitlines()
        if line.startswith("      key=$(")
    ]
    placeholder = (ROOT / "deploy" / "k8s" / "overlays" / "production" / "api-keys.env").read_text("utf-8")
    target = tmp_path / "deploy" / "k8s" / "overlays" / "production" / "api-keys.env"
    target.parent.mkdir(parents=True)
    target.write_text(placeholder)
    no_python = tmp_path / "bin"
    no_python.mkdir()
    for tool in ("printf",):
        if found := shutil.which(tool):
            (no_python / tool).symlink_to(found)
    subprocess.run(["/bin/bash", "-c", recipe], cwd=tmp_path, env={"PATH": str(no_python)}, check=False)
    assert target.read_text("utf-8") == placeholder  # left as it was: the pods still refuse to start
    subprocess.run(["/bin/bash", "-c", recipe], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}, check=True)
    [line] = target.read_text("utf-8").splitlines()
    settings = Settings.from_env(dict([line.split("=", 1)]))
    assert len(settings.api_keys) == 1 and len(settings.api_keys[0]) >= 40


def test_the_signing_component_mounts_the_key_from_a_secret_it_does_not_ship(tmp_path: Path) -> None:
    """The key and the older published keys come from the Secret maubinh-signing, read-only and
    readable by the pod's group (fsGroup) and root alone; the component ships no Secret, so no private key is in git."""
    objects = render(with_components(tmp_path, PRODUCTION, SIGNING))
    version = kubernetes_validate.latest_version()
    for obj in objects:
        kubernetes_validate.validate(obj, version, strict=True)
    pods = _deployment(objects)["spec"]["template"]["spec"]
    container = pods["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    mount = next(m for m in container["volumeMounts"] if m["name"] == "signing")
    assert mount["readOnly"] and "subPath" not in mount
    assert env["MAUBINH_SIGNING_KEY_FILE"] == mount["mountPath"] + "/signing.pem"
    assert env["MAUBINH_PUBLISHED_KEYS_FILE"] == mount["mountPath"] + "/published.json"
    volume = next(v for v in pods["volumes"] if v["name"] == "signing")["secret"]
    assert volume["secretName"] == "maubinh-signing" and volume["defaultMode"] == 0o440
    assert not any(o["kind"] == "Secret" and o["metadata"]["name"] == "maubinh-signing" for o in objects)
    assert (
        Settings.from_env({k: v for k, v in env.items() if v is not None}).signing_key_file
        == env["MAUBINH_SIGNING_KEY_FILE"]
    )


LOG = DEPLOY / "k8s" / "components" / "log"


def test_the_log_component_runs_the_log_as_its_own_stateful_set_and_feeds_it(tmp_path: Path) -> None:
    """The transparency log: one replica (one process owns the sequence), its folder on a volume that
    outlives the pod, its key from a Secret it does not ship; the service posts to its Service, both
    holding the add key from one Secret it does not ship either."""
    objects = render(with_components(tmp_path, PRODUCTION, SIGNING, LOG))
    version = kubernetes_validate.latest_version()
    for obj in objects:
        kubernetes_validate.validate(obj, version, strict=True)
    log = next(o for o in objects if o["kind"] == "StatefulSet")
    assert log["spec"]["replicas"] == 1
    pod = log["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["command"][:3] == ["maubinh", "log", "serve"]
    folder = container["command"][container["command"].index("--dir") + 1]
    claim = log["spec"]["volumeClaimTemplates"][0]["metadata"]["name"]
    assert next(m for m in container["volumeMounts"] if m["name"] == claim)["mountPath"] == folder
    env = {e["name"]: e.get("value") for e in container["env"]}
    key = next(m for m in container["volumeMounts"] if m["name"] == "key")
    assert env["MAUBINH_LOG_KEY_FILE"] == key["mountPath"] + "/log.pem" and key["readOnly"]
    assert next(v for v in pod["volumes"] if v["name"] == "key")["secret"]["secretName"] == "maubinh-log-key"
    assert not any(o["kind"] == "Secret" and o["metadata"]["name"] == "maubinh-log-key" for o in objects)
    service = next(o for o in objects if o["kind"] == "Service" and o["metadata"]["name"] == "maubinh-log")
    fed = {e["name"]: e.get("value") for e in _deployment(objects)["spec"]["template"]["spec"]["containers"][0]["env"]}
    ports = {port["name"]: port for port in service["spec"]["ports"]}
    assert fed["MAUBINH_LOG_URL"] == f"http://maubinh-log:{ports['add']['port']}"  # adds on a port of their own
    served = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert served["add"] == ports["add"]["port"] and served["add"] != served["http"]
    command = container["command"]
    assert command[command.index("--add-port") + 1] == str(served["add"])
    assert command[command.index("--port") + 1] == str(served["http"])
    fence = next(o for o in objects if o["kind"] == "NetworkPolicy" and o["metadata"]["name"] == "maubinh-log")
    assert fence["spec"]["podSelector"]["matchLabels"].items() <= log["spec"]["template"]["metadata"]["labels"].items()
    reads, adds = fence["spec"]["ingress"]
    assert reads == {"ports": [{"port": "http"}]}  # from anyone
    pods = _deployment(objects)["spec"]["template"]["metadata"]["labels"]
    assert adds["ports"] == [{"port": "add"}] and [
        p["podSelector"]["matchLabels"].items() <= pods.items() for p in adds["from"]
    ] == [True]
    assert Settings.from_env({"MAUBINH_LOG_URL": fed["MAUBINH_LOG_URL"]}).log_url == fed["MAUBINH_LOG_URL"]
    served = _deployment(objects)["spec"]["template"]["spec"]
    for side, container_of in ((pod, container), (served, served["containers"][0])):  # the log and the feeder
        named = {e["name"]: e.get("value") for e in container_of["env"]}
        mount = next(
            m
            for m in container_of["volumeMounts"]
            if named["MAUBINH_LOG_ADD_KEY_FILE"].startswith(m["mountPath"] + "/")
        )
        volume = next(v for v in side["volumes"] if v["name"] == mount["name"])
        assert volume["secret"]["secretName"] == "maubinh-log-add-key" and mount["readOnly"]
    assert not any(o["kind"] == "Secret" and o["metadata"]["name"] == "maubinh-log-add-key" for o in objects)


ROUNDS = DEPLOY / "k8s" / "components" / "rounds"


def _expanded(env: list[dict[str, Any]], secrets: dict[tuple[str, str], str]) -> dict[str, str]:
    """A container's environment as the kubelet gives it: each value from its Secret, and each ``$(NAME)``
    of a variable listed before it replaced by that variable's value (a later one's is left as written).
    Values from elsewhere (the pod's own fields) are left out."""
    values: dict[str, str] = {}
    for variable in env:
        if "secretKeyRef" in variable.get("valueFrom", {}):
            reference = variable["valueFrom"]["secretKeyRef"]
            values[variable["name"]] = secrets[(reference["name"], reference["key"])]
        elif "value" in variable:
            values[variable["name"]] = re.sub(
                r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: values.get(m[1], m[0]), variable["value"]
            )
    return values


def test_the_rounds_component_keeps_rounds_on_a_volume_and_never_evicts_them(tmp_path: Path) -> None:
    """Rounds scored once need a Redis that keeps a week of rounds (docs/receipts.md): its own StatefulSet
    appending every write to a file on a volume that outlives the pod, refusing writes when full rather
    than evicting a round, asking for a password (the Secret maubinh-rounds-redis) of whoever the
    NetworkPolicy lets through, and the pods' MAUBINH_ROUNDS_REDIS_URL at its Service with that password;
    beside the quotas' Redis (no disk), not in its place."""
    objects = render(with_components(tmp_path, PRODUCTION, QUOTAS, ROUNDS))
    version = kubernetes_validate.latest_version()
    for obj in objects:
        kubernetes_validate.validate(obj, version, strict=True)
    kept = next(o for o in objects if o["kind"] == "StatefulSet" and o["metadata"]["name"] == "maubinh-rounds-redis")
    assert kept["spec"]["replicas"] == 1
    container = kept["spec"]["template"]["spec"]["containers"][0]
    password = os.urandom(32).hex()  # as `openssl rand -hex 32` makes one (docs/deployment.md): nothing a URL escapes
    secrets = {("maubinh-rounds-redis", "password"): password}
    own = _expanded(container["env"], secrets)
    arguments = [re.sub(r"\$\((\w+)\)", lambda m: own[m[1]], word) for word in container["args"]]
    settings = dict(zip(arguments[::2], arguments[1::2], strict=True))
    assert settings["--requirepass"] == password
    claim = kept["spec"]["volumeClaimTemplates"][0]["metadata"]["name"]
    assert next(m for m in container["volumeMounts"] if m["name"] == claim)["mountPath"] == settings["--dir"]
    assert settings["--appendonly"] == "yes" and settings["--maxmemory-policy"] == "noeviction"
    service = next(o for o in objects if o["kind"] == "Service" and o["metadata"]["name"] == "maubinh-rounds-redis")
    env = _expanded(_deployment(objects)["spec"]["template"]["spec"]["containers"][0]["env"], secrets)
    url = f"redis://{service['metadata']['name']}:{service['spec']['ports'][0]['port']}/0"
    assert env["MAUBINH_ROUNDS_REDIS_URL"] == url and env["MAUBINH_QUOTA_REDIS_URL"] != url
    read = Settings.from_env(env)
    assert read.rounds_redis_url == url and read.rounds_retention_days == 7 and read.rounds_redis_password == password

    pods = _deployment(objects)["spec"]["template"]["metadata"]["labels"]
    fence = next(o for o in objects if o["kind"] == "NetworkPolicy" and o["metadata"]["name"] == "maubinh-rounds-redis")
    assert fence["spec"]["podSelector"]["matchLabels"].items() <= kept["spec"]["template"]["metadata"]["labels"].items()
    (allowed,) = fence["spec"]["ingress"]
    assert [p["podSelector"]["matchLabels"].items() <= pods.items() for p in allowed["from"]] == [True]
    assert container["resources"]["requests"]["memory"] == container["resources"]["limits"]["memory"]

    from redis import Redis
    from redis.exceptions import AuthenticationError, RedisError, ResponseError
    from redis_server import redis_server
    from server import free_port

    from service.api.round_store import RoundStore, round_key

    def stop(store: Redis) -> None:  # as a pod is stopped: SIGTERM
        os.kill(int(store.info("server")["process_id"]), signal.SIGTERM)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                store.ping()
            except (OSError, RedisError):  # gone: its file written and synced, as it does on SIGTERM
                return
            time.sleep(0.05)

    settings["--dir"] = str(tmp_path)  # the volume
    given = [word for pair in settings.items() for word in pair]
    port, kept_key, forgotten_key = free_port(), round_key("anonymous", "7"), round_key("anonymous", "8")
    probe = container["readinessProbe"]["exec"]["command"]
    probe = [word.replace("redis-cli", f"redis-cli -p {port}") for word in probe]
    with redis_server(given, port):
        with pytest.raises(AuthenticationError):  # NOAUTH: a pod let through without the password
            Redis(port=port).set(round_key("anonymous", "6"), "another room")
        assert subprocess.run(probe, env={**os.environ, **own}, check=False).returncode == 0, "ready, with the password"
        unready = {k: v for k, v in os.environ.items() if k != "REDISCLI_AUTH"}
        assert subprocess.run(probe, env=unready, capture_output=True, check=False).returncode != 0
        here = read.rounds_redis_url.replace(f"//{service['metadata']['name']}:6379/", f"//127.0.0.1:{port}/")
        pods = RoundStore(here, 7, password=read.rounds_redis_password)
        assert pods.claim([("5", b"room digest")])[0].outcome == "new", "the pods' settings are let in"
        store = Redis(port=port, password=password)
        store.set(kept_key, "room digest", ex=7 * 86_400)
        assert store.config_get("maxmemory-policy") == {"maxmemory-policy": "noeviction"}
        assert store.config_get("appendonly") == {"appendonly": "yes"} and store.config_get("save") == {"save": ""}
        store.config_set("maxmemory", 1)  # full
        with pytest.raises(ResponseError, match="used memory > 'maxmemory'"):
            store.set(round_key("anonymous", "9"), "another room", ex=60)
        assert store.get(kept_key) == b"room digest", "full, it refuses the new round and keeps the old"
        store.config_set("maxmemory", settings["--maxmemory"])
        stop(store)
    with redis_server(given, port):
        kept_round = Redis(port=port, password=password).get(kept_key)
        assert Redis(port=port, password=password).ttl(kept_key) > 6 * 86_400
    assert kept_round == b"room digest", "a round outlives its Redis's restart"
    quotas = next(o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "maubinh-redis")
    forgetting = ["--dir", str(tmp_path), *quotas["spec"]["template"]["spec"]["containers"][0]["args"]]
    with redis_server(forgetting, port):
        Redis(port=port).set(forgotten_key, "room digest")
        stop(Redis(port=port))
    with redis_server(forgetting, port):
        assert Redis(port=port).get(forgotten_key) is None, "the quotas' Redis forgets: not for rounds"
