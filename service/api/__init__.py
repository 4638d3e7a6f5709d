"""The HTTP API: an application factory; views only translate between HTTP and the domain.

May import: service.trust, service.documents, service.serialize and every layer below them; never
service.bulk, service.server or service.cli.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Flask

from service.api import (
    auth,
    batch_slots,
    connection,
    errors,
    language,
    logs,
    metrics,
    quotas,
    rounds,
    signatures,
    tracing,
)
from service.api.config import Settings, callers_of, log_add_key_of, signing_of, start_language
from service.api.round_store import RoundStore
from service.api.views import api
from service.game.hands import hand_table
from service.rulesets.catalogue import Catalogue, builtin_catalogue
from service.rulesets.operator_folder import OperatorFileError, catalogue_for
from service.texts import Text
from service.transparency.feeder import Feeder


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Build the app; ``config`` overrides the environment's settings (field names of Settings)."""
    settings = Settings.from_env().merged(config)
    app = Flask(__name__, static_folder=None)  # no /static route: the viewer's assets have their own
    try:
        loaded, fault = catalogue(settings), None
    except OperatorFileError as error:
        loaded, fault = builtin_catalogue(), error
        said = Text("setting.rulesets_unready", fault=error.said())  # in the language `serve --lang` asked
        logs.logger(settings.log_level).error("%s", said.render(start_language()))
    app.config.update(
        SETTINGS=settings, MAX_CONTENT_LENGTH=settings.max_body_bytes, CATALOGUE=loaded, RULESETS_FAULT=fault
    )
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.url_map.merge_slashes = False  # /v1//score: a 404 problem, not an HTML redirect to the Host header's site
    tracing.register(app)
    logs.register(
        app,
        settings.log_level,
        settings.log_requests,
        lambda: {"caller": auth.caller_name()} | metrics.log_fields() | tracing.log_fields(),
    )
    metrics.register(app)
    callers = callers_of(settings)
    callers.on_fault = metrics.callers_file_failed
    auth.register(app, callers)
    batch_slots.register(app, settings.batch_slots)
    quotas.register(app, quotas.QuotaStore(settings.quota_redis_url, metrics.quota_store_failed))
    rounds.register(app, rounds_of(settings))
    signatures.register(app, *signing_of(settings), feeder_of(settings))
    errors.register(app)
    language.register(app)
    app.register_blueprint(api)
    app.after_request(connection.close_on_a_body_left)
    import service.validation.schemas  # noqa: F401 - marshmallow before the workers fork, not at a first refusal

    known = app.config["CATALOGUE"]
    for ruleset_id in known.latest:  # every version and its tables built before the first request
        for ruleset in known.versions(ruleset_id):
            hand_table(ruleset.wheel)
    return app


def feeder_of(settings: Settings) -> Feeder | None:
    """The transparency log's feeder, when MAUBINH_LOG_URL names the log and answers are signed."""
    if not settings.log_url or not settings.signing_key_file:
        return None
    return Feeder(settings.log_url, signatures.count_statements, add_key=log_add_key_of(settings))


def rounds_of(settings: Settings) -> rounds.Rounds | None:
    """Rounds scored once, when MAUBINH_ROUNDS_REDIS_URL names where they are recorded."""
    if not settings.rounds_redis_url:
        return None
    store = RoundStore(
        settings.rounds_redis_url, settings.rounds_retention_days, password=settings.rounds_redis_password
    )
    return rounds.Rounds(store, settings.rounds_unreachable == "open", metrics.rounds_unchecked)


def catalogue(settings: Settings) -> Catalogue:
    """The built-in rulesets plus the operator's folder; a bad file raises OperatorFileError, naming
    the file, pointer and fault. The app then starts unready (``RULESETS_FAULT``): /readyz answers
    503 naming it, every /v1/ request 503, and the metrics say so, so that an alert can."""
    return catalogue_for(settings.rulesets_dir)
