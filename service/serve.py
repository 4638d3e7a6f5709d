"""``maubinh serve``: run gunicorn with the service's configuration, metrics across workers."""

from __future__ import annotations

import os
import sys
import tempfile

DEFAULT_CONFIG = "python:service.gunicorn_config"


def serve(host: str | None, port: int | None) -> int:
    """Replace this process with gunicorn, so that signals reach its master directly. An operator's
    ruleset folder is checked first: a bad file is named here, with its pointer and fault, and the
    service starts unready (create_app), so that a rollout stops and an alert fires."""
    from service.api import catalogue
    from service.api.config import SettingError, Settings
    from service.api.tracing import TracingSettingError, enabled
    from service.extras import OTEL, missing
    from service.rulesets.operator_folder import OperatorFileError

    try:
        settings = Settings.from_env()
    except SettingError as error:
        print(f"maubinh serve: not starting, {error}", file=sys.stderr)
        return 2
    try:
        tracing = enabled()
    except TracingSettingError as error:
        print(f"maubinh serve: not starting, {error}", file=sys.stderr)
        return 2
    if tracing and (absent := missing("traces (OTEL_TRACES_EXPORTER) need", OTEL)):
        print(f"maubinh serve: not starting, {absent}", file=sys.stderr)
        return 2
    try:
        catalogue(settings)
    except OperatorFileError as error:
        print(
            "maubinh serve: MAUBINH_RULESETS_DIR holds a bad ruleset file; starting unready (/readyz and "
            f"every /v1/ request answer 503) until it is fixed and the service restarted:\n{error}",
            file=sys.stderr,
        )
    env = dict(os.environ)
    if host is not None:
        env["MAUBINH_HOST"] = host
    if port is not None:
        env["MAUBINH_PORT"] = str(port)
    if not env.get("PROMETHEUS_MULTIPROC_DIR"):
        env["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="maubinh-metrics-")
    config = env.get("MAUBINH_GUNICORN_CONFIG", DEFAULT_CONFIG)
    os.execve(sys.executable, [sys.executable, "-m", "gunicorn", "--config", config], env)
    return 0  # pragma: no cover - execve does not return
