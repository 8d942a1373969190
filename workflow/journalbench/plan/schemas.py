"""Schema validation with one-line errors that name the file and the field."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from journalbench.errors import ConfigError

# libyaml's safe loader where PyYAML has it: a tenth of the pure-Python one's time (the
# pipeline reads every campaign file when it starts)
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schemas"


@cache
def load_schema(name: str) -> dict[str, Any]:
    if name == "run-record":
        return recorded_run_schema()
    return json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text())


def recorded_run_schema() -> dict[str, Any]:
    """The spec.json of a run already made: a run spec whose arm, tool, I/O control and iocost
    QoS procedure may be ones this version's agent cannot run (an older or newer agent made
    it); its data is still data."""
    schema = copy.deepcopy(load_schema("run-spec"))
    schema["properties"]["arm"] = {"type": "string", "minLength": 1}
    schema["properties"]["io_control"] = {"type": "string", "minLength": 1}
    schema["properties"]["iocost_qos"] = {"type": "string", "minLength": 1}
    schema["$defs"]["workload"]["properties"]["tool"] = {"type": "string", "minLength": 1}
    return schema


def field_path(error: jsonschema.ValidationError) -> str:
    return ".".join(str(part) for part in error.absolute_path) or "(top level)"


@cache
def validator(schema: str) -> jsonschema.Draft202012Validator:
    # one per schema: a validator resolves its $refs once (tidy validates every run's spec)
    return jsonschema.Draft202012Validator(load_schema(schema))


@cache
def fast_validator(schema: str) -> Callable[[Any], Any]:
    import fastjsonschema

    # use_default=False: it would fill the schema's defaults into the data
    return fastjsonschema.compile(load_schema(schema), use_default=False)


def validate(data: Any, schema: str, source: str) -> None:
    """Raise ConfigError for the first (most relevant) schema violation of data.

    fastjsonschema (compiled: a tenth of jsonschema's time, and tidy validates every run's
    spec) passes what is valid; anything it does not pass is judged by jsonschema, whose
    verdict stands and whose best match names the field."""
    import fastjsonschema

    try:
        fast_validator(schema)(data)
        return
    except fastjsonschema.JsonSchemaException:
        pass
    checker = validator(schema)
    if checker.is_valid(data):
        return
    error = jsonschema.exceptions.best_match(checker.iter_errors(data))
    if error is not None:
        raise ConfigError(f"{source}: field {field_path(error)}: {error.message}")


def read_document(path: Path) -> Any:
    """Read a YAML or JSON file (JSON is YAML), with a one-line error on bad syntax."""
    try:
        return yaml.load(path.read_text(), Loader=SAFE_LOADER)
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise ConfigError(f"{path}:{where} not valid YAML/JSON ({error})") from None


def load_validated(path: Path, schema: str) -> Any:
    data = read_document(path)
    validate(data, schema, str(path))
    return data
