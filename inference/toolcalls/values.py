"""Argument values the formats write as text (Qwen3-Coder XML, GLM, DSML, Kimi K3), typed by the
tool's JSON Schema when the model was given one.

The servers agree on the rule (vLLM's and SGLang's Qwen3-Coder and GLM readers): a value whose
schema says string stays the text as written, blanks included (GLM's `'  Beijing  '` is what the
model meant); a value whose schema names another type is read as that type, and an `anyOf`,
`oneOf` or list of types tries each non-string type before falling back to the text. A value
that does not read as its declared type stays text: the call is still the model's, and the tool
reports the wrong type better than a dropped call would.
"""

from __future__ import annotations

import ast
import json
from typing import Any, cast

from inference.toolcalls.calls import Tools, json_object

Schema = dict[str, Any]
_NUMBER_TYPES = ("integer", "number")


def properties_of(tools: Tools, name: str) -> dict[str, Schema]:
    """The `properties` of the named tool's parameters, {} when unknown."""
    for tool in tools or ():
        function = json_object((json_object(tool) or {}).get("function"))
        if function is not None and function.get("name") == name:
            parameters = json_object(function.get("parameters")) or {}
            return json_object(parameters.get("properties")) or {}
    return {}


# Type names tool catalogs write besides JSON Schema's (vLLM's and mlx-lm's readers take them).
_ALIASES = (
    (("int", "uint", "long", "short"), "integer"),
    (("num", "float", "double", "decimal"), "number"),
    (("bool", "binary"), "boolean"),
    (("str", "text", "char", "varchar"), "string"),
    (("dict", "obj"), "object"),
    (("list", "arr"), "array"),
)


def _json_type(name: str) -> str:
    name = name.strip().lower()
    return next((kind for prefixes, kind in _ALIASES if name.startswith(prefixes)), name)


def schema_types(schema: Any) -> list[str]:
    """The JSON types a schema allows, in the order it names them ([] when it names none)."""
    fields = json_object(schema)
    if fields is None:
        return []
    kind = fields.get("type")
    if isinstance(kind, str):
        return [_json_type(kind)]
    if isinstance(kind, list):
        return [_json_type(k) for k in cast("list[object]", kind) if isinstance(k, str)]
    types: list[str] = []
    for key in ("anyOf", "oneOf", "allOf"):
        for option in fields.get(key) or ():
            types += [k for k in schema_types(option) if k not in types]
    if not types and "enum" in fields:
        types = ["enum"]
    return types


def typed(text: str, schema: Any, untyped: str = "text") -> Any:
    """`text` read as the type its schema names. Without a usable schema, `untyped` decides:
    "text" keeps the text, "json" reads it as JSON when it is JSON."""
    types = schema_types(schema)
    if not types:
        return _json_or(text) if untyped == "json" else text
    if types == ["enum"]:
        return text
    for kind in types:
        if kind in ("string", "enum"):
            continue
        value = _as(kind, text)
        if value is not _NOT:
            return value
    return text


_NOT = object()


def _as(kind: str, text: str) -> Any:
    stripped = text.strip()
    if kind == "null":
        return None if stripped.lower() in ("null", "none") else _NOT
    if kind == "boolean":
        lowered = stripped.lower()
        return {"true": True, "false": False}.get(lowered, _NOT)
    try:
        value = json.loads(stripped)
    except ValueError:
        if kind not in ("object", "array"):
            return _NOT
        # Models write Python literals too ({'a': 'b'}, True); vLLM and mlx-lm read them so.
        try:
            value = ast.literal_eval(stripped)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return _NOT
    if kind in _NUMBER_TYPES:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return _NOT
        if kind == "integer":
            return int(value) if float(value).is_integer() else _NOT
        return value
    return value if _fits(value, kind) else _NOT


def _fits(value: object, kind: str) -> bool:
    """Whether a decoded value is of the container type `kind` names (any value for others)."""
    expected = {"object": dict, "array": list}.get(kind)
    return expected is None or isinstance(value, expected)


def _json_or(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text
