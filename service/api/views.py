"""Routes: each loads the body, calls the domain through service.documents, dumps."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import nullcontext
from importlib import resources
from typing import Any, Final

import gevent
from flask import Blueprint, Response, current_app, g, request
from gunicorn.http.errors import NoMoreData, ParseException
from werkzeug.datastructures import MIMEAccept
from werkzeug.exceptions import (
    BadRequest,
    ClientDisconnected,
    NotFound,
    RequestEntityTooLarge,
    RequestTimeout,
    ServiceUnavailable,
    UnsupportedMediaType,
)
from werkzeug.exceptions import NotImplemented as UnknownTransferCoding  # 501, RFC 9112 6.1
from werkzeug.http import parse_accept_header

from service import version
from service.api import metrics
from service.api.auth import caller_catalogue, keyed_caller, private_if_keyed, source, the_caller
from service.api.batch_slots import take_batch_slot
from service.api.connection import body_taken
from service.api.language import first_choices, language
from service.api.problem_pages import problem_page
from service.api.quotas import take_rooms
from service.api.rounds import each_scored_once, scored_once
from service.api.rules_page import rules_page
from service.api.signatures import bind_room, published_keys
from service.api.viewer_page import viewer_page
from service.documents import (
    Operation,
    arrange_document,
    evaluate_document,
    score_batch_results,
    score_document,
    verify_document,
)
from service.problem_types import PROBLEM_TYPES
from service.rulesets.catalogue import Catalogue
from service.serialize import dumps, dumps_results, ruleset_json, rulesets_json
from service.support.strict_json import loads, most_values
from service.support.traced_stages import stage
from service.texts import LANGUAGES, Text, phrasebook
from service.trust.callers import Caller
from service.trust.receipts import receipt_document

api = Blueprint("api", __name__)


def _ok(body: object) -> Response:
    with stage("serialize"):
        return Response(dumps(body, language()), status=200, content_type="application/json")


def _body() -> bytes:
    """The body, or 413 past the route's limit (``request.max_content_length``) however it is framed,
    or 408 when it takes longer than MAUBINH_BODY_SECONDS to arrive: under gevent's workers a slow
    body costs no thread, but each holds a connection, and they are finite. A refused body is not read
    on: its answer closes the connection (service/api/connection.py)."""
    with gevent.Timeout(current_app.config["SETTINGS"].body_seconds, RequestTimeout):
        try:
            body = _read_body()
        except ParseException as error:  # gunicorn parses a chunked body as the app reads it
            raise BadRequest(Text("problem.bad_chunk_detail")) from error
        except NoMoreData as error:  # a chunked body cut short: its client stopped sending
            raise ClientDisconnected(Text("problem.body_cut_detail")) from error
    body_taken()
    return body


def _read_body() -> bytes:
    """werkzeug cuts a chunked body at the limit: one byte more tells a body past it."""
    limit, length = request.max_content_length, request.content_length
    if length is not None and limit is not None and length > limit:
        raise RequestEntityTooLarge
    if length is not None:
        return _declared_length(length)
    if limit is None:
        return request.get_data(cache=False)
    body: bytes = request.input_stream.read(limit + 1)
    if len(body) > limit:
        raise RequestEntityTooLarge
    return body


def _declared_length(length: int) -> bytes:
    """A body of declared length, read from the WSGI input in one call (400 if it ends short): werkzeug's
    stream reads it through 64 KB buffers, a visible share of a score request (docs/benchmarks.md)."""
    body: bytes = request.environ["wsgi.input"].read(length)
    if len(body) < length:
        raise ClientDisconnected(Text("problem.body_short_detail", received=len(body), declared=length))
    return body


class TooManyValues(RequestEntityTooLarge):
    """A body within its byte limit that holds more JSON values than its route reads (413)."""

    def __init__(self, most: int) -> None:
        super().__init__()
        self.most = most


def _check_media() -> None:
    """415 unless the body is JSON in UTF-8 with no content coding; 501 for a transfer coding other than
    chunked (gunicorn passes ``gzip, chunked`` on, undecoded)."""
    mimetype = request.mimetype
    if mimetype != "application/json" and not (mimetype.startswith("application/") and mimetype.endswith("+json")):
        raise UnsupportedMediaType
    if (transfer := request.headers.get("Transfer-Encoding")) is not None:
        codings = [c.strip().lower() for c in transfer.split(",")]
        if any(coding not in ("chunked", "identity", "") for coding in codings):
            raise UnknownTransferCoding(Text("problem.transfer_coding_detail", coding=",".join(codings)[:64]))
    charset = request.mimetype_params.get("charset", "utf-8").lower()
    coding = request.headers.get("Content-Encoding", "identity").strip().lower()
    if charset not in ("utf-8", "utf8") or coding not in ("identity", ""):
        raise UnsupportedMediaType(Text("problem.unsupported_coding_detail", charset=charset[:32], coding=coding[:32]))


def _json_body(values: int | None = None) -> Any:
    """The request's JSON document: 415 or 501 as :func:`_check_media` says, 400 if not parseable, 413
    past the body limit or, when ``values`` is given, past that many values (a parsed value costs up
    to ~200 bytes: 4 MiB of ``[{},{},…]`` would take 100 MB)."""
    _check_media()
    body = _body()
    if values is not None and most_values(body) > values:
        raise TooManyValues(values)
    with stage("parse"):
        document = loads(body)
    g.document = document  # a signed refusal binds the room too (service/api/signatures.py)
    return document


def _catalogue(caller: Caller | None) -> Catalogue:
    """The rulesets this request's caller may use (service/api/auth.py)."""
    return caller_catalogue(current_app.config["CATALOGUE"], caller)


def _count_rooms(rooms: int, caller: Caller | None) -> None:
    """Count this request's rooms against its caller's quota (service/api/quotas.py): 429 over it."""
    take_rooms(current_app.extensions["maubinh.quotas"], caller, rooms)


_UNREAD: Final = object()
"""The body not yet read: ``null`` is a body like any other, refused as one (422), never read twice."""


def _answer(operation: Operation, signed: bool = False, document: Any = _UNREAD, once: bool = False) -> Response:
    """``once``: the room's round scored with this room only (service/api/rounds.py)."""
    document = _json_body() if document is _UNREAD else document
    caller = the_caller()
    _count_rooms(1, caller)  # a room scored, verified, evaluated or arranged: after the body parses, before the work
    with scored_once(document) if once else nullcontext():
        body = operation(document, _catalogue(caller), language())
    g.outcome = body
    return _ok(bind_room(body, document) if signed else body)


@api.post("/v1/score", provide_automatic_options=False)
def score() -> Response:
    return _answer(score_document, signed=True, once=True)


def _taking_turns(results: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Each room's result in turn, letting this worker's other requests (a health probe) run between
    rooms: gevent's workers patch ``time.sleep``, and ``sleep(0)`` yields to them."""
    for result in results:
        yield result
        time.sleep(0)


VALUES_PER_ROOM = 256
"""What a batch reads per room it may hold: a four-player room is ~80 values, a house-rule patch up
to ~200 more."""


@api.post("/v1/score/batch", provide_automatic_options=False)
def score_batch() -> Response:
    """Up to MAUBINH_MAX_BATCH_ROOMS rooms; this route alone reads up to MAUBINH_MAX_BATCH_BYTES."""
    settings = current_app.config["SETTINGS"]
    take_batch_slot()
    request.max_content_length = settings.max_batch_bytes
    body = _json_body(values=settings.max_batch_rooms * VALUES_PER_ROOM)
    caller, answered = the_caller(), dict[int, dict[str, Any]]()
    results = score_batch_results(body, _catalogue(caller), settings.max_batch_rooms, language(), answered)
    _count_rooms(len(body["rooms"]), caller)  # the envelope holds: n rooms count n, before any is scored
    outcomes: list[metrics.RoomOutcome | metrics.RoomRefused] = []
    with each_scored_once(body["rooms"]) as (refused, scored):  # a room refused for its round is not scored
        answered.update(refused)
        bound = (bind_room(result, room) for result, room in zip(_taking_turns(results), body["rooms"], strict=True))
        body = dumps_results((metrics.noted(result, outcomes) for result in bound), language())
        scored.extend(isinstance(outcome, metrics.RoomOutcome) for outcome in outcomes)
    g.batch_outcomes = outcomes  # counted once recorded: a batch refused for a round it lost scored nothing
    return Response(body, status=200, content_type="application/json")


@api.post("/v1/verify", provide_automatic_options=False)
def verify() -> Response:
    document = _json_body()
    if isinstance(document, dict) and "receipt" in document:  # a receipt in place of a claim
        caller = the_caller()
        _count_rooms(1, caller)
        limited = caller is not None and caller.rulesets is not None  # "not known" may be "not yours"
        answer = receipt_document(document, _catalogue(caller), language(), published_keys(), limited)
        return _ok(bind_room(answer, document))
    return _answer(verify_document, signed=True, document=document)


@api.post("/v1/evaluate", provide_automatic_options=False)
def evaluate() -> Response:
    return _answer(evaluate_document)


@api.post("/v1/arrange", provide_automatic_options=False)
def arrange() -> Response:
    return _answer(arrange_document)


@api.get("/v1/rulesets", provide_automatic_options=False)
def rulesets() -> Response:
    caller = the_caller()
    _count_rooms(0, caller)
    return _ok(rulesets_json(_catalogue(caller)))


PINNED_CACHE = "public, max-age=31536000, immutable"
"""A pinned version never changes (docs/rules.md §11.2): it may be cached for good."""


@api.get("/v1/rulesets/<ruleset_id>", provide_automatic_options=False)
def ruleset(ruleset_id: str) -> Response:
    """One ruleset, whole; its ETag is its digest, and ``If-None-Match`` with it answers 304."""
    caller = the_caller()
    _count_rooms(0, caller)
    catalogue = _catalogue(caller)
    found = catalogue.get(ruleset_id)
    if found is None:
        raise NotFound(catalogue.unknown(ruleset_id))  # names the known ids, as a 422 does
    cache_control = private_if_keyed(PINNED_CACHE if "@" in ruleset_id else "no-cache")
    headers = {"ETag": f'"{found.digest}"', "Cache-Control": cache_control}
    if request.if_none_match.contains_weak(found.digest):  # RFC 9110 13.1.2: If-None-Match compares weakly
        return Response(status=304, headers={**headers, "Vary": "Accept-Language"})  # the 200's (15.4.5)
    response = _ok(ruleset_json(found))
    response.headers.update(headers)
    return response


@api.get("/healthz", provide_automatic_options=False)
def healthz() -> Response:
    return _ok({"status": "ok"})


@api.before_request
def refuse_rooms_while_unready() -> None:
    """Without the operator's rulesets this instance answers no /v1/ request: scoring under the
    built-ins alone would refuse the operator's ids and could read a bare id as another version."""
    if current_app.config["RULESETS_FAULT"] is not None and request.path.startswith("/v1/"):
        raise ServiceUnavailable(Text("problem.unready_detail"))


@api.get("/readyz", provide_automatic_options=False)
def readyz() -> Response:
    fault = current_app.config["RULESETS_FAULT"]
    if fault is not None:  # the file and the fault only to a keyed caller: paths and quoted fragments
        if keyed_caller():
            raise ServiceUnavailable(Text("problem.rulesets_fault_detail", fault=fault.said()))
        raise ServiceUnavailable(Text("problem.rulesets_failed_detail"))
    loaded = _catalogue(the_caller()).latest
    ready: dict[str, Any] = {"status": "ready", "rulesets": len(loaded), "version": version()}
    callers_fault = source().fault
    if callers_fault is not None and keyed_caller():  # ready on the last good callers; the fault to a keyed caller
        ready["callers_fault"] = Text("problem.callers_fault_detail", fault=callers_fault)
    return _ok(ready)


@api.get("/metrics", provide_automatic_options=False)
def metrics_text() -> Response:
    text, content_type = metrics.exposition()
    return Response(text, status=200, content_type=content_type)


VIEWER_ASSETS = {
    "viewer.js": "text/javascript; charset=utf-8",
    "viewer.css": "text/css; charset=utf-8",
    "examples.json": "application/json",
}
VIEWER_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def _static(name: str, content_type: str) -> Response:
    body = resources.files("service").joinpath("static", name).read_bytes()
    return Response(body, status=200, content_type=content_type, headers=VIEWER_HEADERS)


@api.get("/viewer", provide_automatic_options=False)
def viewer() -> Response:
    """The showdown viewer: a page that replays a scored room chi by chi (no CDN, works offline),
    served in the language asked, so that its first paint (or a reader without scripts) is in it."""
    said = language()
    answer = Response(viewer_page(said), status=200, content_type="text/html; charset=utf-8", headers=VIEWER_HEADERS)
    answer.headers["Content-Language"] = said
    answer.vary.add("Accept-Language")  # a cache keeps one page per language
    return answer


@api.get("/viewer/<asset>", provide_automatic_options=False)
def viewer_asset(asset: str) -> Response:
    content_type = VIEWER_ASSETS.get(asset)
    if content_type is None:
        raise NotFound
    return _static(asset, content_type)


@api.get("/viewer/texts/<language>.json", provide_automatic_options=False)
def viewer_texts(language: str) -> Response:
    """The viewer's words in one language: the ``viewer.*`` part of that language's catalogue."""
    if language not in LANGUAGES:
        raise NotFound
    texts = {key: text for key, text in phrasebook(language).items() if key.startswith("viewer.")}
    return Response(dumps(texts), status=200, content_type="application/json", headers=VIEWER_HEADERS)


@api.get("/docs/rules", provide_automatic_options=False)
def rules() -> Response:
    """docs/rules.md as a page; ledger citations (docs/rules.md §5) link to its sections (#s5)."""
    said = language()
    page = Response(rules_page(said), status=200, content_type="text/html; charset=utf-8", headers=VIEWER_HEADERS)
    page.headers["Content-Language"] = said
    page.vary.add("Accept-Language")
    return page


@api.get("/problems/<slug>", provide_automatic_options=False)
def problem_type_page(slug: str) -> Response:
    """What a problem's ``type`` (a relative URI) resolves to: its page, in the reader's language."""
    page = problem_page(slug, language())
    if page is None:
        raise NotFound(Text("problem.unknown_type", known=", ".join(PROBLEM_TYPES)))
    headers = {**VIEWER_HEADERS, "Content-Language": language(), "Vary": "Accept-Language"}
    return Response(page, status=200, content_type="text/html; charset=utf-8", headers=headers)


YAML_TYPES = ["application/yaml", "text/yaml"]
"""RFC 9512's type first; text/yaml for clients (and generators) that read only text/*."""


@api.get("/openapi.yaml", provide_automatic_options=False)
def openapi() -> Response:
    spec = resources.files("service").joinpath("openapi.yaml").read_bytes()
    offered = parse_accept_header(first_choices(request.headers.get("Accept", "")), MIMEAccept)
    media_type = offered.best_match(YAML_TYPES, default=YAML_TYPES[0])
    return Response(spec, status=200, content_type=f"{media_type}; charset=utf-8")
