"""Every kind of problem the service answers (RFC 9457 ``type``), each with a page of its own.

A problem's ``type`` is the relative URI ``/problems/<slug>`` (RFC 9457 allows a relative reference,
resolved against the request's URI), so it resolves on the service that answered: ``GET
/problems/<slug>`` is a short page, in the reader's language, saying what it means and what to send
instead. openapi.yaml lists the same slugs; a test holds the two equal.
"""

from __future__ import annotations

from typing import Final, NamedTuple


class ProblemType(NamedTuple):
    status: int | None
    """The status it answers with (None: whichever HTTP error it names)."""
    title: str
    meaning: str
    instead: str
    """The phrasebook keys of its title, and of its page's two paragraphs."""


PROBLEM_TYPES: Final = {
    "bad-json": ProblemType(400, "problem.bad_json", "problem.type_bad_json_meaning", "problem.type_bad_json_instead"),
    "unauthorized": ProblemType(
        401, "problem.unauthorized", "problem.type_unauthorized_meaning", "problem.type_unauthorized_instead"
    ),
    "forbidden": ProblemType(
        403, "problem.forbidden", "problem.type_forbidden_meaning", "problem.type_forbidden_instead"
    ),
    "not-found": ProblemType(
        404, "problem.not_found", "problem.type_not_found_meaning", "problem.type_not_found_instead"
    ),
    "method-not-allowed": ProblemType(
        405,
        "problem.method_not_allowed",
        "problem.type_method_not_allowed_meaning",
        "problem.type_method_not_allowed_instead",
    ),
    "request-timeout": ProblemType(
        408, "problem.timeout", "problem.type_request_timeout_meaning", "problem.type_request_timeout_instead"
    ),
    "payload-too-large": ProblemType(
        413, "problem.too_large", "problem.type_payload_too_large_meaning", "problem.type_payload_too_large_instead"
    ),
    "unsupported-media-type": ProblemType(
        415,
        "problem.unsupported_media_type",
        "problem.type_unsupported_media_type_meaning",
        "problem.type_unsupported_media_type_instead",
    ),
    "unprocessable-room": ProblemType(
        422,
        "problem.unprocessable_title",
        "problem.type_unprocessable_room_meaning",
        "problem.type_unprocessable_room_instead",
    ),
    "internal-error": ProblemType(
        500, "problem.internal", "problem.type_internal_error_meaning", "problem.type_internal_error_instead"
    ),
    "service-unavailable": ProblemType(
        503,
        "problem.unavailable",
        "problem.type_service_unavailable_meaning",
        "problem.type_service_unavailable_instead",
    ),
    "quota-exceeded": ProblemType(
        429, "problem.quota_exceeded", "problem.type_quota_exceeded_meaning", "problem.type_quota_exceeded_instead"
    ),
    "round-in-flight": ProblemType(
        409, "problem.round_in_flight", "problem.type_round_in_flight_meaning", "problem.type_round_in_flight_instead"
    ),
    "busy": ProblemType(503, "problem.busy", "problem.type_busy_meaning", "problem.type_busy_instead"),
    "http-error": ProblemType(
        None, "problem.other", "problem.type_http_error_meaning", "problem.type_http_error_instead"
    ),
}
PROBLEM_PATH: Final = "/problems/"
SLUG_OF_TITLE: Final = {
    **{kind.title: slug for slug, kind in PROBLEM_TYPES.items()},
    "problem.unprocessable_request_title": "unprocessable-room",  # one player's cards: the same kind, no room
}


def problem_type(title_key: str) -> str:
    """The ``type`` URI of a problem by its title's key: any other HTTP error is ``http-error``."""
    return PROBLEM_PATH + SLUG_OF_TITLE.get(title_key, "http-error")
