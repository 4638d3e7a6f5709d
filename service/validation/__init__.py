"""Requests → domain objects, naming every fault with its JSON pointer.

One module an idea: ``limits`` (what each value may be, without marshmallow), ``fields`` (JSON value
types and validators), ``schemas`` (the bodies), ``bounds`` (sizes checked before anything loads),
``faults`` (marshmallow's messages → faults and their order), ``room_rules`` (the checks that need the
ruleset or the whole room), ``plain_rooms`` (the common room body read without marshmallow), ``load``
(the entry points, below) and ``room_arrays`` (rooms read straight into arrays, for the rules' array
form). marshmallow is imported with the schemas, at the first body that needs one.

May import: service.scoring (claims, result types), service.contract, service.rulesets, service.game,
service.support, service.texts and marshmallow; never HTTP, signing or the advisor.
"""

import re
import sys
from typing import Any


class _PatternAtFirstUse:
    """A pattern compiled when first used (its attributes asked for), not when made."""

    def __init__(self, pattern: Any, flags: int, compile_now: Any) -> None:
        self._made = (pattern, flags, compile_now)
        self._compiled: re.Pattern[Any] | None = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # a probe (abc asks each class attribute for __isabstractmethod__)
            raise AttributeError(name)
        if self._compiled is None:
            pattern, flags, compile_now = self._made
            self._compiled = compile_now(pattern, flags)
        return getattr(self._compiled, name)


def import_marshmallow() -> None:
    """marshmallow.validate compiles its e-mail patterns (a class of every Unicode letter, case-folded)
    as it is imported: ~50 ms of the one-room CLI's ~200 (bench/cli.py). No schema here validates an
    e-mail, so those of its patterns wait for their first use; any other module's compile as ever.
    The modules that import marshmallow (``fields``, ``schemas``) call this first; a body that needs no
    schema (``plain_rooms``) never imports them."""
    if "marshmallow.validate" in sys.modules:
        return
    compile_now = re.compile

    def compile_at_first_use(pattern: Any, flags: int = 0) -> Any:
        if sys._getframe(1).f_globals.get("__name__") != "marshmallow.validate":
            return compile_now(pattern, flags)
        return _PatternAtFirstUse(pattern, flags, compile_now)

    re.compile = compile_at_first_use
    try:
        import marshmallow.validate  # noqa: F401
    finally:
        re.compile = compile_now


from service.validation.load import (  # noqa: E402 - after import_marshmallow, which it may call
    ArrangeRequest,
    load_arrange_request,
    load_arrangement,
    load_batch,
    load_room,
    load_verification,
)

__all__ = ["ArrangeRequest", "load_arrange_request", "load_arrangement", "load_batch", "load_room", "load_verification"]
