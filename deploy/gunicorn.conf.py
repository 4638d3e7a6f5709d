"""gunicorn configuration for production: `gunicorn -c deploy/gunicorn.conf.py`.

The settings live in the package (service/server/gunicorn_config.py) so that `maubinh serve`
and an installed wheel use the very same ones; see README "Operations" for the variables.
"""

from service.server.gunicorn_config import *  # noqa: F403
