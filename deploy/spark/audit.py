"""spark-submit's entry point for bulk audits: ``spark-submit [options] deploy/spark/audit.py
score|verify|replay|receipts IN -o OUT`` (README, "Audits at scale"; receipts: docs/receipts.md). The
work is service.bulk.spark's; executors need the package. It hands the bulk side the check of one
receipt, which is the trust side's (the two layers know nothing of each other)."""

import sys

from service.bulk.spark import main
from service.trust.receipt_lines import ReceiptLines

if __name__ == "__main__":
    sys.exit(main(receipts=ReceiptLines))
