"""The WSGI entry point gunicorn loads: ``service.api.wsgi:app``."""

from service.api import create_app

app = create_app()
