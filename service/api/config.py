"""Settings from the environment (prefix ``MAUBINH_``), injectable for tests.

Every setting is listed in the README's Operations section.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from service.rulesets.catalogue import RULESETS_DIR_ENV

PREFIX = "MAUBINH_"
PLACEHOLDER_API_KEY = "REPLACE-ME"
"""The key the Kubernetes overlay ships in api-keys.env: a known key is no key, so serve refuses it."""


@dataclass(frozen=True)
class Settings:
    max_body_bytes: int = 64 * 1024
    """Bodies above this are refused with 413."""
    max_batch_bytes: int = 4 * 1024 * 1024
    """The body limit of POST /v1/score/batch alone."""
    max_batch_rooms: int = 500
    """The most rooms one batch may hold."""
    api_keys: tuple[str, ...] = ()
    """When set, /v1/* needs ``Authorization: Bearer <key>``; health, metrics and the spec stay open."""
    log_level: str = "INFO"
    log_requests: bool = True
    """One JSON line per request on stderr."""
    body_seconds: float = 10.0
    """A body must arrive within this many seconds (408 after)."""
    rulesets_dir: str | None = None
    """A folder of operators' ruleset files (``*.json`` variants), loaded and checked at start."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        if (raw := env.get(PREFIX + "MAX_BODY_BYTES")) is not None:
            values["max_body_bytes"] = int(raw)
        if (raw := env.get(PREFIX + "MAX_BATCH_BYTES")) is not None:
            values["max_batch_bytes"] = int(raw)
        if (raw := env.get(PREFIX + "MAX_BATCH_ROOMS")) is not None:
            values["max_batch_rooms"] = int(raw)
        if (raw := env.get(PREFIX + "BODY_SECONDS")) is not None:
            values["body_seconds"] = float(raw)
        if (raw := env.get(PREFIX + "API_KEYS")) is not None:
            values["api_keys"] = tuple(k.strip() for k in raw.split(",") if k.strip())
        if (raw := env.get(PREFIX + "LOG_LEVEL")) is not None:
            values["log_level"] = raw.upper()
        if raw := env.get(RULESETS_DIR_ENV):
            values["rulesets_dir"] = raw
        if (raw := env.get(PREFIX + "LOG_REQUESTS")) is not None:
            values["log_requests"] = raw.strip().lower() not in ("0", "false", "no", "off")
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
