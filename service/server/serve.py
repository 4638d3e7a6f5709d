"""``maubinh serve``: run gunicorn with the service's configuration, metrics across workers."""

from __future__ import annotations

import os
import sys
import tempfile

from service.texts import Language, Text

DEFAULT_CONFIG = "python:service.server.gunicorn_config"


def serve(host: str | None, port: int | None, language: Language = "en") -> int:
    """Replace this process with gunicorn, so that signals reach its master directly, once the settings
    are known to be usable. A bad file in the operator's ruleset folder does not stop the start: the
    service starts unready and its log names the file (create_app), so that a rollout stops and an
    alert fires."""
    from service.support import metrics_store

    # This process writes no metrics: prometheus-client, imported below, must not open the store (a full
    # one kills it); gunicorn's configuration prepares it for the workers (service/support/metrics_store.py).
    store = os.environ.pop(metrics_store.ENV, None) or tempfile.mkdtemp(prefix="maubinh-metrics-")
    from service.api.config import START_LANGUAGE_ENV, SettingError, Settings, check_usable
    from service.api.tracing import TracingSettingError, enabled
    from service.support.extras import OTEL, missing

    def refuse(reason: object) -> int:
        print(f"maubinh serve: {Text('cli.not_starting', reason=reason).render(language)}", file=sys.stderr)
        return 2

    try:
        settings = Settings.from_env()
        check_usable(settings)
    except SettingError as error:
        return refuse(error.args[0])
    try:
        tracing = enabled()
    except TracingSettingError as error:
        return refuse(error.args[0])
    if tracing and (absent := missing(Text("cli.traces_need").render(language), OTEL, language)):
        return refuse(absent)
    env = dict(os.environ)
    env[START_LANGUAGE_ENV] = language  # the start-up lines gunicorn's processes log, in the language asked
    if host is not None:
        env["MAUBINH_HOST"] = host
    if port is not None:
        env["MAUBINH_PORT"] = str(port)
    env[metrics_store.ENV] = store
    config = env.get("MAUBINH_GUNICORN_CONFIG", DEFAULT_CONFIG)
    os.execve(sys.executable, [sys.executable, "-m", "gunicorn", "--config", config], env)
    return 0  # pragma: no cover - execve does not return
