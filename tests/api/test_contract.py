"""openapi.yaml says what it means: every key of every schema is OpenAPI / JSON Schema vocabulary.

A YAML flow mapping with a comma in a description (`{description: Thú, Cù lũ}`) silently becomes a
stray key; this test names it, as Redocly's `struct` rule does in CI.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

SPEC = yaml.safe_load((Path(__file__).resolve().parents[2] / "openapi.yaml").read_text("utf-8"))

VOCABULARY = {
    # JSON Schema 2020-12: core, applicator, unevaluated, validation, meta-data, format, content
    "$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$defs", "$comment", "$vocabulary",
    "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "prefixItems", "items",
    "contains", "properties", "patternProperties", "additionalProperties", "propertyNames",
    "unevaluatedItems", "unevaluatedProperties", "type", "enum", "const", "multipleOf", "maximum",
    "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems",
    "minItems", "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties", "required",
    "dependentRequired", "title", "description", "default", "deprecated", "readOnly", "writeOnly",
    "examples", "format", "contentEncoding", "contentMediaType", "contentSchema",
    # OpenAPI 3.1's own
    "discriminator", "xml", "externalDocs", "example",
}  # fmt: skip
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
SCHEMA_VALUES = ("items", "not", "if", "then", "else", "contains", "propertyNames", "additionalProperties",
                 "unevaluatedItems", "unevaluatedProperties", "contentSchema")  # fmt: skip


def _within(schema: Any, at: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if not isinstance(schema, dict):
        return
    yield at, schema
    for key in SCHEMA_MAPS:
        for name, child in schema.get(key, {}).items():
            yield from _within(child, f"{at}/{key}/{name}")
    for key in SCHEMA_LISTS:
        for k, child in enumerate(schema.get(key, [])):
            yield from _within(child, f"{at}/{key}/{k}")
    for key in SCHEMA_VALUES:
        yield from _within(schema.get(key), f"{at}/{key}")


def schemas(node: Any = SPEC, at: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every Schema Object in the document: components/schemas and every `schema` of a parameter,
    header or media type."""
    if at == "/components/schemas":
        for name, schema in node.items():
            yield from _within(schema, f"{at}/{name}")
        return
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "schema":
                yield from _within(value, f"{at}/schema")
            elif key not in ("examples", "example"):
                yield from schemas(value, f"{at}/{key}")
    elif isinstance(node, list):
        for k, value in enumerate(node):
            yield from schemas(value, f"{at}/{k}")


def test_every_schema_key_is_vocabulary() -> None:
    found = list(schemas())
    assert len(found) > 100
    strays = [
        f"{at}: {key!r}" for at, schema in found for key in schema if key not in VOCABULARY and not key.startswith("x-")
    ]
    assert strays == []


def test_the_check_would_catch_a_description_cut_in_half() -> None:
    broken = yaml.safe_load("name: {type: string, description: Vietnamese name (Thú, Cù lũ …).}")
    strays = [key for _, schema in _within(broken["name"], "") for key in schema if key not in VOCABULARY]
    assert strays == ["Cù lũ …)."]
