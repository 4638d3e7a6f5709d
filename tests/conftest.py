import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

sys.path.insert(0, str(Path(__file__).parent))

from service.api import create_app


@pytest.fixture
def app() -> Iterator[Flask]:
    yield create_app({"log_requests": False})


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()
