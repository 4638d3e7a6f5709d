"""The server process: ``serve`` (``maubinh serve``: gunicorn with the service's settings) and
``gunicorn_config`` (the settings and hooks gunicorn reads: workers, timeouts, reloads, metrics).

May import: service.api (the app it serves) and everything below it; never service.cli.
"""
