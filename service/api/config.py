"""Settings from the environment (prefix ``MAUBINH_``), injectable for tests.

Every setting is listed in the README's Operations section.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Final

from service.rulesets.catalogue import RULESETS_DIR_ENV
from service.support.bearer_token import BEARER_TOKEN
from service.texts import Language, Text
from service.transparency.add_key import AddKeyError, read_add_key
from service.trust.callers import CallersFileError
from service.trust.callers_source import CallersSource
from service.trust.signing import Signer, SigningKeyError, load_key_set, load_private_key
from service.validation.limits import MOST_BATCH_ROOMS

PREFIX = "MAUBINH_"
PLACEHOLDER_API_KEY = "REPLACE-ME"
"""The key the Kubernetes overlay ships in api-keys.env: a known key is no key, so the start refuses it."""


class SettingError(ValueError):
    """A setting that is present but unusable: the service refuses to start, naming it (``args[0]``, a
    Text, says why in any language)."""


@dataclass(frozen=True)
class Settings:
    max_body_bytes: int = 64 * 1024
    """Bodies above this are refused with 413."""
    max_batch_bytes: int = 4 * 1024 * 1024
    """The body limit of POST /v1/score/batch alone."""
    max_batch_rooms: int = MOST_BATCH_ROOMS
    """The most rooms one batch may hold."""
    batch_slots: int = 4
    """The most batch answers a worker holds at once, from reading the body to the last byte sent."""
    api_keys: tuple[str, ...] = field(default=(), repr=False)  # secrets: never in a repr, a traceback's locals
    """When set, /v1/* needs ``Authorization: Bearer <key>``: one caller, ``default``, with every scope."""
    callers_file: str | None = None
    """A TOML file of callers, each with its keys (as SHA-256), routes, operator rulesets and quota."""
    quota_redis_url: str | None = None
    """Redis, where callers' quotas (rooms_per_minute) are counted across workers and instances."""
    rounds_redis_url: str | None = None
    """Redis, where each caller's rounds are recorded with the room they were scored with (scored once)."""
    rounds_redis_password: str | None = field(default=None, repr=False)
    """That Redis's password (a Secret's value, as it is: any character), sent as its ``default`` user's;
    never logged. A password written in the URL is used instead."""
    rounds_retention_days: int = 7
    """How long a scored round is kept, and so refuses another room."""
    rounds_unreachable: str = "closed"
    """When the rounds' Redis does not answer: ``closed`` (503, nothing scored unchecked) or ``open``."""
    signing_key_file: str | None = None
    """An Ed25519 private key (PEM PKCS#8): answers that rule on rooms are signed with it."""
    published_keys_file: str | None = None
    """A JWK Set of older public keys still published at /.well-known/jwks.json (after a rotation)."""
    log_url: str | None = None
    """The transparency log (``maubinh log serve``) every signed ruling is posted to, in the background."""
    log_add_key_file: str | None = None
    """The log's add key (:mod:`service.transparency.add_key`), sent with each post to ``log_url``."""
    log_level: str = "INFO"
    log_requests: bool = True
    """One JSON line per request on stderr."""
    body_seconds: float = 10.0
    """A body must arrive within this many seconds (408 after)."""
    rulesets_dir: str | None = None
    """A folder of operators' ruleset files (``*.json`` variants), loaded and checked at start."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """The settings the environment gives; :class:`SettingError` names one that is unusable."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for name, attribute, read in _READERS:
            if (raw := env.get(PREFIX + name)) is not None:
                values[attribute] = read(PREFIX + name, raw)
        if raw := env.get(RULESETS_DIR_ENV):
            values["rulesets_dir"] = raw
        if (raw := env.get(PREFIX + "CALLERS_FILE")) is not None:
            if not raw.strip():
                raise SettingError(Text("setting.no_callers_file", name=PREFIX + "CALLERS_FILE"))
            values["callers_file"] = raw
        return cls(**values)

    def merged(self, overrides: Mapping[str, Any] | None) -> Settings:
        """These settings with ``overrides`` (field names, as in ``create_app(config=...)``) applied."""
        if not overrides:
            return self
        known = {f.name for f in fields(self)}
        unknown = set(overrides) - known
        if unknown:
            raise ValueError(f"unknown settings: {', '.join(sorted(unknown))}")
        values = dict(overrides)
        if isinstance(values.get("api_keys"), str):
            values["api_keys"] = (values["api_keys"],)
        elif "api_keys" in values:
            values["api_keys"] = tuple(values["api_keys"])
        return replace(self, **values)


def _whole(name: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise SettingError(Text("setting.whole", name=name, raw=raw[:40])) from None
    if value < 0:
        raise SettingError(Text("setting.negative", name=name, value=str(value)))
    return value


def _count(name: str, raw: str) -> int:
    value = _whole(name, raw)
    if value < 1:
        raise SettingError(Text("setting.at_least_one", name=name, value=str(value)))
    return value


def _seconds(name: str, raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise SettingError(Text("setting.seconds", name=name, raw=raw[:40])) from None
    if not value > 0:
        raise SettingError(Text("setting.seconds_positive", name=name, raw=raw[:40]))
    return value


def _keys(name: str, raw: str) -> tuple[str, ...]:
    """Keys, comma-separated. Set but holding no usable key is a fault, not "no keys": an empty value
    (a secret that failed to render, ``$(openssl rand …)`` without openssl) would otherwise start the
    service open to anyone."""
    keys = tuple(key.strip() for key in raw.split(",") if key.strip())
    if not keys:
        raise SettingError(Text("setting.no_key", name=name))
    if any(key.upper() == PLACEHOLDER_API_KEY for key in keys):  # replace-me, Replace-Me: the same placeholder
        raise SettingError(Text("setting.placeholder_key", name=name, placeholder=PLACEHOLDER_API_KEY))
    for position, key in enumerate(keys, 1):
        if not BEARER_TOKEN.fullmatch(key):
            raise SettingError(Text("setting.key_character", name=name, position=position, count=len(keys)))
    return keys


REDIS_URL_QUERY: Final = frozenset({"db", "username", "password", "client_name", "health_check_interval"})
"""What a Redis URL's query may set, besides ``ssl_…`` for rediss://: redis-py passes any other key to its
connections as it is, where one it does not know failed every request, and its timeouts and retries are the
service's own (service/api/redis_link.py)."""


def _redis_url(name: str, raw: str) -> str:
    """A URL redis-py reads, checked at start: read at a store's first use, a bad one failed each request."""
    if not raw.startswith(("redis://", "rediss://", "unix://")):
        raise SettingError(Text("setting.redis_url", name=name))
    from urllib.parse import parse_qsl, urlsplit

    from redis import ConnectionPool

    try:
        keys = {key for key, _ in parse_qsl(urlsplit(raw).query, keep_blank_values=True)}
    except ValueError:
        keys = set()  # redis-py refuses it below
    if unknown := sorted(k for k in keys if k not in REDIS_URL_QUERY and not k.startswith("ssl_")):
        raise SettingError(Text("setting.redis_url_query", name=name, key=unknown[0][:40]))
    try:
        ConnectionPool.from_url(raw).make_connection()  # read and made, not connected
    except Exception:
        raise SettingError(
            Text("setting.redis_url_unread", name=name, password=PREFIX + "ROUNDS_REDIS_PASSWORD")
        ) from None
    return raw


def _password(name: str, raw: str) -> str:
    """As it is, white space and all: Redis compares it byte for byte with what it was given."""
    if not raw:
        raise SettingError(Text("setting.no_password", name=name))
    return raw


def _http_url(name: str, raw: str) -> str:
    if not raw.startswith(("http://", "https://")):
        raise SettingError(Text("setting.http_url", name=name))
    return raw


START_LANGUAGE_ENV = "MAUBINH_START_LANG"
"""The start-up lines' language, set by ``maubinh serve --lang``."""
ROUNDS_UNREACHABLE = ("closed", "open")
"""What MAUBINH_ROUNDS_UNREACHABLE may say: fail closed (the default) or open."""


def _unreachable(name: str, raw: str) -> str:
    value = raw.strip().lower()
    if value not in ROUNDS_UNREACHABLE:
        raise SettingError(Text("setting.one_of", name=name, choices=", ".join(ROUNDS_UNREACHABLE), raw=raw[:40]))
    return value


def _path(name: str, raw: str) -> str:
    if not raw.strip():
        raise SettingError(Text("setting.no_file", name=name))
    return raw


def signing_of(settings: Settings) -> tuple[Signer | None, list[dict[str, str]]]:
    """The signer and the published keys the settings give; :class:`SettingError` for a key or key
    set that cannot be used (the service refuses to start rather than answer unsigned)."""
    try:
        published = load_key_set(settings.published_keys_file) if settings.published_keys_file else []
        if settings.signing_key_file is None:
            return None, published
        return Signer(load_private_key(settings.signing_key_file), published), published
    except SigningKeyError as error:
        raise SettingError(Text("setting.signing", fault=error.args[0])) from None


def log_add_key_of(settings: Settings) -> str | None:
    """The log's add key the settings name; :class:`SettingError` for a file that cannot be used."""
    if settings.log_add_key_file is None:
        return None
    try:
        return read_add_key(settings.log_add_key_file)
    except AddKeyError as error:
        raise SettingError(Text("setting.log_add_key", fault=error.args[0])) from None


def check_usable(settings: Settings) -> None:
    """A setting present but unusable stops the start (:class:`SettingError`): a callers file that does
    not load, a signing key that cannot be used (never answer unsigned by mistake), a log's add key that
    cannot be read (never feed the log statements it will refuse)."""
    callers_of(settings)
    signing_of(settings)
    log_add_key_of(settings)


def signing_state(settings: Settings) -> Text:
    """The start log's line on signatures."""
    if settings.signing_key_file:
        key = "setting.signed_logged" if settings.log_url else "setting.signed"
        return Text(key, file=settings.signing_key_file, url=settings.log_url or "")
    return Text("setting.unsigned_log_url" if settings.log_url else "setting.unsigned")


def rounds_state(settings: Settings) -> Text:
    """The start log's line on rounds scored once (docs/receipts.md)."""
    if not settings.rounds_redis_url:
        return Text("setting.rounds_unrecorded")
    from service.api.redis_link import safe_url

    url, days = safe_url(settings.rounds_redis_url), str(settings.rounds_retention_days)
    key = {"closed": "setting.rounds_once_closed", "open": "setting.rounds_once_open"}[settings.rounds_unreachable]
    return Text(key, url=url, days=days)


def start_language() -> Language:
    """The language of the start-up lines: ``maubinh serve --lang`` hands it to gunicorn's processes."""
    return "vi" if os.environ.get(START_LANGUAGE_ENV) == "vi" else "en"


def _level(name: str, raw: str) -> str:
    return raw.upper()


def _switch(name: str, raw: str) -> bool:
    return raw.strip().lower() not in ("0", "false", "no", "off")


_READERS: tuple[tuple[str, str, Callable[[str, str], Any]], ...] = (
    ("MAX_BODY_BYTES", "max_body_bytes", _whole),
    ("MAX_BATCH_BYTES", "max_batch_bytes", _whole),
    ("MAX_BATCH_ROOMS", "max_batch_rooms", _count),
    ("BATCH_SLOTS", "batch_slots", _count),
    ("BODY_SECONDS", "body_seconds", _seconds),
    ("API_KEYS", "api_keys", _keys),
    ("QUOTA_REDIS_URL", "quota_redis_url", _redis_url),
    ("ROUNDS_REDIS_URL", "rounds_redis_url", _redis_url),
    ("ROUNDS_REDIS_PASSWORD", "rounds_redis_password", _password),
    ("ROUNDS_RETENTION_DAYS", "rounds_retention_days", _count),
    ("ROUNDS_UNREACHABLE", "rounds_unreachable", _unreachable),
    ("SIGNING_KEY_FILE", "signing_key_file", _path),
    ("PUBLISHED_KEYS_FILE", "published_keys_file", _path),
    ("LOG_URL", "log_url", _http_url),
    ("LOG_ADD_KEY_FILE", "log_add_key_file", _path),
    ("LOG_LEVEL", "log_level", _level),
    ("LOG_REQUESTS", "log_requests", _switch),
)
"""Each setting's name after ``MAUBINH_``, its field, and how its text is read."""


def key_requirement(settings: Settings) -> Text:
    """The start log's line on keys: whether /v1 needs one."""
    if settings.callers_file:
        key = "setting.keys_callers_and_api" if settings.api_keys else "setting.keys_callers"
        return Text(key, file=settings.callers_file, count=str(len(settings.api_keys)))
    if settings.api_keys:
        return Text("setting.keys_api", count=str(len(settings.api_keys)))
    return Text("setting.keys_open")


def callers_of(settings: Settings) -> CallersSource:
    """The callers the settings give; :class:`SettingError` for a callers file that does not load."""
    try:
        return CallersSource(settings.callers_file, settings.api_keys)
    except CallersFileError as error:
        raise SettingError(error.args[0]) from None
