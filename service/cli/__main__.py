"""``python -m service.cli``: the command line, as the ``maubinh`` script runs it."""

import sys

from service.cli.commands import main

sys.exit(main())
