"""Requests → domain objects, naming every fault with its JSON pointer.

One module an idea: ``fields`` (JSON value types and validators), ``schemas`` (the bodies),
``bounds`` (sizes checked before anything loads), ``faults`` (marshmallow's messages → faults and
their order), ``room_rules`` (the checks that need the ruleset or the whole room) and ``load`` (the
entry points, below).
"""

from service.validation.load import (
    ArrangeRequest,
    load_arrange_request,
    load_arrangement,
    load_batch,
    load_room,
    load_verification,
)

__all__ = ["ArrangeRequest", "load_arrange_request", "load_arrangement", "load_batch", "load_room", "load_verification"]
