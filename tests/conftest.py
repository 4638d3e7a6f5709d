import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

sys.path.insert(0, str(Path(__file__).parent))

from service.api import create_app


def _refuse_stale_compiled_modules() -> None:
    """setup.py compiles some modules with mypyc; a .so older than its .py would test yesterday's code."""
    for name, module in list(sys.modules.items()):
        if not name.startswith("service."):
            continue
        compiled = Path(getattr(module, "__file__", None) or "")
        if compiled.suffix == ".so":
            source = compiled.parent / (compiled.name.split(".")[0] + ".py")
            if source.stat().st_mtime > compiled.stat().st_mtime:
                pytest.exit(f"{compiled.name} is older than {source.name}: run `make test` (or pip install -e .)", 2)


_refuse_stale_compiled_modules()

SLOW = {"system"}
"""tests/system/ runs real servers, a browser, subprocesses and deployment tools: marked slow."""
SLOW_MODULES = {"test_schemathesis.py"}
"""Fuzzing every operation takes tens of seconds, though in process."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """``pytest -m "not slow"`` is the inner loop: the rules, the hands, the properties, the app in process."""
    for item in items:
        if SLOW & set(item.path.parts) or item.path.name in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def app() -> Iterator[Flask]:
    yield create_app({"log_requests": False})


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()
