"""Who calls, and what it may do: with callers configured (a callers file, or MAUBINH_API_KEYS), every
operation the contract does not declare open needs ``Authorization: Bearer <key>`` of a caller whose
``routes`` hold the operation's scope.

Which operations are open, and each one's scope, are read from openapi.yaml (``security: []`` and
``x-scope``), the one list of them. A path that is no route (404, 405) needs no key: there is nothing
behind it to protect. An unknown or expired key is 401; a route outside the caller's scope 403; an
operator ruleset outside it is answered exactly as an unknown id (:func:`caller_catalogue`). An answer
given on a key is ``Cache-Control: private``, so that no shared cache hands it to a caller without one.
"""

from __future__ import annotations

import re
import time
from functools import cache
from importlib import resources
from typing import NamedTuple

import yaml
from flask import Flask, Response, current_app, g, request
from werkzeug.exceptions import Forbidden, Unauthorized

from service.rulesets.catalogue import Catalogue
from service.support.bearer_token import offered_key
from service.texts import Text
from service.trust.callers import ANONYMOUS, UNKNOWN, Caller
from service.trust.callers_source import CallersSource

_TEMPLATE_PART = re.compile(r"\{[^}]*\}|<[^>]*>")


class Operation(NamedTuple):
    open: bool
    scope: str | None


def _template(path: str) -> str:
    """A path template with its parameters unnamed: ``/v1/rulesets/{id}`` and Flask's
    ``/v1/rulesets/<ruleset_id>`` are both ``/v1/rulesets/{}``."""
    return _TEMPLATE_PART.sub("{}", path)


@cache
def operations() -> dict[tuple[str, str], Operation]:
    """(path template, method) → whether openapi.yaml declares it open, and its scope (``x-scope``)."""
    spec = yaml.load(resources.files("service").joinpath("openapi.yaml").read_bytes(), Loader=yaml.CSafeLoader)
    return {
        (_template(path), method.upper()): Operation(operation.get("security") == [], operation.get("x-scope"))
        for path, item in spec["paths"].items()
        for method, operation in item.items()
        if isinstance(operation, dict)
    }


def open_operations() -> frozenset[tuple[str, str]]:
    """(path template, method) of every operation openapi.yaml declares open (``security: []``)."""
    return frozenset(key for key, operation in operations().items() if operation.open)


def _operation(method: str) -> Operation | None:
    """This request's operation in the contract; None for a path that is no route."""
    rule = request.url_rule
    if rule is None:
        return None
    return _rule_operation(rule.rule, "GET" if method == "HEAD" else method)


@cache
def _rule_operation(rule: str, method: str) -> Operation:
    """A Flask rule's operation, once a rule: the app's rules are few and fixed."""
    return operations().get((_template(rule), method), Operation(False, None))


def source() -> CallersSource:
    found: CallersSource = current_app.extensions["maubinh.callers"]
    return found


class Identified(NamedTuple):
    """Who this request is from: the caller its key belongs to, if any, the name logs give it, and
    whether its answer is given on that key (a route that needs one)."""

    caller: Caller | None
    name: str
    keyed: bool = False


NOBODY = Identified(None, ANONYMOUS)


def _identified() -> Identified:
    found: Identified = g.get("identified", NOBODY)
    return found


def the_caller() -> Caller | None:
    """The caller whose key this request carries, if any (identified once, before the view)."""
    return _identified().caller


def keyed_caller() -> bool:
    """Whether this request carries the key of a configured caller."""
    return _identified().caller is not None


def caller_name() -> str:
    """The caller as logs, metrics and traces name it: its name, ``unknown`` or ``anonymous``."""
    return _identified().name


def private_if_keyed(cache_control: str) -> str:
    """A view's own Cache-Control: made private when the answer is given on a key (and then left as is)."""
    identified = _identified()
    if not identified.keyed:
        return cache_control
    g.identified = identified._replace(keyed=False)
    return "private, " + cache_control.replace("public, ", "")


def caller_catalogue(catalogue: Catalogue, caller: Caller | None) -> Catalogue:
    """The rulesets ``caller`` may use: the built-ins and the operator rulesets in its scope; any other
    is answered as an unknown id, so that its existence does not leak."""
    if caller is None or caller.rulesets is None:
        return catalogue
    views: dict[tuple[str, ...], Catalogue] = current_app.extensions["maubinh.catalogue_views"]
    view = views.get(caller.rulesets)
    if view is None:
        view = views[caller.rulesets] = catalogue.limited_to(frozenset(caller.rulesets))
    return view


def register(app: Flask, callers: CallersSource) -> None:
    app.extensions["maubinh.callers"] = callers
    app.extensions["maubinh.catalogue_views"] = {}
    operations()  # read once, before the first request

    @app.before_request
    def identify() -> None:
        callers.current(time.monotonic())
        if not callers.keyed:
            return
        environ = request.environ
        offered = offered_key(environ.get("HTTP_AUTHORIZATION"))
        caller = callers.callers.identify(offered)
        name = caller.name if caller is not None else UNKNOWN if offered else ANONYMOUS
        operation = _operation(environ["REQUEST_METHOD"])
        if operation is None or operation.open:
            g.identified = Identified(caller, name)
            return
        if caller is None:
            g.identified = Identified(caller, name)
            raise Unauthorized(_why_not(callers, offered, bool(environ.get("HTTP_AUTHORIZATION"))))
        if operation.scope is not None and operation.scope not in caller.routes:
            g.identified = Identified(caller, name)
            raise OutOfScope(caller.name, operation.scope)
        g.identified = Identified(caller, name, keyed=True)

    @app.after_request
    def private_when_keyed(response: Response) -> Response:
        if _identified().keyed:  # no view of a keyed route set its own (private_if_keyed turns it off)
            response.headers.add("Cache-Control", "private")
        return response


def _why_not(callers: CallersSource, offered: str | None, sent: bool) -> Text | None:
    """Why a key was refused: none sent (the default words: send one), or the one sent is unknown (a
    header that holds no key of ours counts) or expired, which sending it again will not mend."""
    if not sent:
        return None
    expired = callers.callers.expired(offered) if offered else None
    if expired is not None:
        return Text("problem.unauthorized_expired", expired=expired.isoformat().replace("+00:00", "Z"))
    return Text("problem.unauthorized_unknown")


class OutOfScope(Forbidden):
    """A caller's key, on a route its ``routes`` do not hold (403)."""

    def __init__(self, caller: str, scope: str) -> None:
        super().__init__(Text("problem.forbidden_detail", caller=caller, scope=scope))
