"""spark-submit's entry point for bulk audits: ``spark-submit [options] deploy/spark/audit.py score|verify|replay
IN -o OUT`` (README, "Audits at scale"). The work is service.bulk.spark's; executors need the package."""

import sys

from service.bulk.spark import main

if __name__ == "__main__":
    sys.exit(main())
