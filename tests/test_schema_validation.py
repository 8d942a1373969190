"""schemas.validate passes data with fastjsonschema and leaves every other verdict, and the error
message, to jsonschema: the two must agree on what is valid. fastjsonschema knows the
vocabulary of draft 7; a keyword of a later draft would be skipped by it silently, so the
schemas may use draft 7's keywords only, and on the shipped run specs, damaged at random, the
fast validator never passes what jsonschema rejects."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from typing import Any

import fastjsonschema
import pytest

from conftest import REPO
from journalbench.errors import ConfigError
from journalbench.plan import schemas

SCHEMAS = sorted(p.name.removesuffix(".schema.json") for p in schemas.SCHEMA_DIR.glob("*.json"))
# draft 7's keywords (the validation and annotation ones our schemas may use), and $defs, which
# both read as a plain place for $ref to point into
DRAFT7 = {"$schema", "$id", "$ref", "$defs", "definitions", "$comment", "title", "description",
          "default", "examples", "type", "enum", "const", "multipleOf", "maximum",
          "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern",
          "items", "additionalItems", "maxItems", "minItems", "uniqueItems", "contains",
          "maxProperties", "minProperties", "required", "properties", "patternProperties",
          "additionalProperties", "dependencies", "propertyNames", "if", "then", "else",
          "allOf", "anyOf", "oneOf", "not", "format", "readOnly", "writeOnly"}
VALUES = [None, True, False, 0, -1, 1.5, 1.0, 10**9, "", "x", "shared-journal", [], {}, [1],
          {"a": 1}]


def keywords(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield key
            if key in ("default", "examples", "const", "enum"):
                continue  # values, not schemas
            # names of properties and definitions are not keywords
            children = value.values() if key in ("properties", "$defs", "definitions",
                                                 "patternProperties") else [value]
            for child in children:
                yield from keywords(child)
    elif isinstance(node, list):
        for item in node:
            yield from keywords(item)


@pytest.mark.parametrize("name", [*SCHEMAS, "run-record"])
def test_schemas_use_draft_7_keywords_only(name: str) -> None:
    assert set(keywords(schemas.load_schema(name))) <= DRAFT7


def paths(node: Any, above: tuple = ()) -> Iterator[tuple]:
    if above:
        yield above
    children = node.items() if isinstance(node, dict) else (
        enumerate(node) if isinstance(node, list) else [])
    for key, child in children:
        yield from paths(child, (*above, key))


def damaged(spec: dict, rng: random.Random) -> dict:
    spec = copy.deepcopy(spec)
    *route, last = rng.choice(list(paths(spec)))
    parent = spec
    for key in route:
        parent = parent[key]
    roll = rng.random()
    if roll < 0.2 and isinstance(parent, dict):
        del parent[last]
    elif roll < 0.3 and isinstance(parent, dict):
        parent["unknown_field"] = 1
    else:
        parent[last] = rng.choice(VALUES)
    return spec


def test_fast_validation_never_passes_what_jsonschema_rejects() -> None:
    specs = [json.loads(p.read_text())
             for p in sorted((REPO / "data" / "raw").glob("*/*/*/spec.json"))[::50]]
    assert len(specs) >= 20
    rng, fast, slow = random.Random(7), schemas.fast_validator("run-record"), \
        schemas.validator("run-record")
    rejected = 0
    for spec in specs:
        assert slow.is_valid(spec)
        fast(spec)
        for _ in range(40):
            bad = damaged(spec, rng)
            if not slow.is_valid(bad):
                rejected += 1
                with pytest.raises(fastjsonschema.JsonSchemaException):
                    fast(bad)
    assert rejected > 100  # the damage reaches the schema's rules


def test_an_invalid_spec_still_names_its_field() -> None:
    spec = json.loads(next((REPO / "data" / "raw").glob("thesis-hdd/*/*/spec.json")).read_text())
    spec["duration_s"] = "long"
    with pytest.raises(ConfigError, match=r"^spec\.json: field duration_s: 'long' is not of type"):
        schemas.validate(spec, "run-record", "spec.json")
