"""The WSGI entry point gunicorn loads: ``service.api.wsgi:app``.

gunicorn preloads it in the master, so the advisor's numpy and tables are built here once and the
workers inherit them: the first ``POST /v1/arrange`` a worker answers is as quick as the rest.
"""

from service.api import create_app
from service.documents import prepare

prepare("arrange")
app = create_app()
