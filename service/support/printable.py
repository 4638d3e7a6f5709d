"""Text that a file or a body says (a round id, a key, a file's name), written so that it cannot start
a line of its own, move the cursor, hide what follows or turn the text around on a terminal, and so
that it can always be written as UTF-8."""

from __future__ import annotations

import re
from typing import Final

UNPRINTABLE: Final = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
"""Control characters (C0, C1), line and paragraph separators, bidirectional controls, lone surrogates."""


def escaped(text: str) -> str:
    """``text`` with each :data:`UNPRINTABLE` character written as its escape (``\\n``, ``\\x1b``, ``\\u202e``)."""
    return UNPRINTABLE.sub(lambda found: found[0].encode("unicode_escape").decode(), text)
