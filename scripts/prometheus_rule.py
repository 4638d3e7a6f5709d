"""Writes deploy/k8s/components/monitoring/prometheusrule.yaml from deploy/prometheus/alerts.yaml: the
same rule groups, wrapped for the Prometheus Operator. Run after editing the rules; a test checks that
the two agree."""

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "deploy" / "prometheus" / "alerts.yaml"
TARGET = ROOT / "deploy" / "k8s" / "components" / "monitoring" / "prometheusrule.yaml"
HEADER = "# Generated from deploy/prometheus/alerts.yaml by scripts/prometheus_rule.py: edit the rules there.\n"


def _block_strings(dumper: yaml.SafeDumper, text: str) -> Any:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


def prometheus_rule() -> str:
    rule = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "maubinh", "labels": {"app.kubernetes.io/name": "maubinh"}},
        "spec": yaml.safe_load(RULES.read_text("utf-8")),
    }
    dumper = type("BlockDumper", (yaml.SafeDumper,), {})
    dumper.add_representer(str, _block_strings)
    return HEADER + yaml.dump(rule, Dumper=dumper, sort_keys=False, width=100, allow_unicode=True)


if __name__ == "__main__":
    TARGET.write_text(prometheus_rule(), "utf-8")
