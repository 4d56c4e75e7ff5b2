"""Llama 3.1–3.3 and Llama 4 calls, which mlx-lm has no parser for.

Their templates ask for a bare JSON object, `{"name": "f", "parameters": {…}}`, as the whole
reply; Llama 3.1 may put `<|python_tag|>` before it (the same tag its built-in tools use, as
`brave_search.call(query="…")`), Llama 4's template writes a message's text inside
`<|python_start|>…<|python_end|>` and its calls after that (calls inside the block are read too),
and several objects may follow one another (separated by `;`, `,` or blanks).
Llama 3.2 and Llama 4 were also taught the "pythonic" list, `[get_weather(city="SF"),
get_time()]`, read here with `ast` (literals only, never evaluated): mlx-lm's pythonic parser
falls back to a regular expression that drops positional arguments instead of refusing the call.

A reply counts as a call only when it starts like one (a tag, `{"name"`, or `[name(`): Llama has no
closing marker, so JSON in the middle of prose stays prose. After `<|python_tag|>`, everything
must be calls.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence

from inference.toolcalls.calls import Found, Scan, Tools, found, found_in_json, json_prefix

_TAGS = ("<|python_tag|>", "<|python_start|>")
_PYTHON_END = "<|python_end|>"
_JSON_CALL = re.compile(r'\s*\{\s*"(?:name|type|function)"\s*:')
_PYTHONIC_CALL = re.compile(r"\s*\[\s*[A-Za-z_][\w.\-]*\s*\(")
_BUILTIN_CALL = re.compile(r"\s*[A-Za-z_][\w.\-]*\.call\s*\(")
_SEPARATORS = " \t\r\n;,"
_JSON_LITERALS = {"true": True, "false": False, "null": None}


def llama3_extract(answer: str, scan: Scan, tools: Tools) -> None:
    tags = [(i, t) for t in _TAGS if (i := answer.find(t)) >= 0]
    if not tags:
        _untagged(answer, scan)
        return
    at, tag = min(tags)
    if at > 0 and _starts_call(answer):
        _untagged(answer, scan)  # the tag is inside a call's argument, not before it
        return
    scan.text(answer[:at])
    rest = answer[at + len(tag) :]
    if _whole(rest):  # calls whose arguments may quote <|python_end|>
        scan.read(answer[at:], _tagged, rest)
        return
    inside, closed, after = rest.partition(_PYTHON_END)
    if closed and _starts_call(after):
        # Llama 4's template writes a message's text in the python block and its calls after it.
        scan.text(inside)
        _untagged(after, scan)
    elif closed:
        scan.read(tag + inside + closed, _tagged, inside)
        scan.text(after)
    else:
        scan.read(answer[at:], _tagged, rest)


def _whole(body: str) -> bool:
    try:
        return bool(_tagged(body))
    except Exception:  # untrusted text: any error means the body is not calls alone
        return False


def _starts_call(text: str) -> bool:
    return bool(_JSON_CALL.match(text) or _PYTHONIC_CALL.match(text))


def _untagged(text: str, scan: Scan) -> None:
    if _JSON_CALL.match(text):
        _json_calls(text, scan)
    elif _PYTHONIC_CALL.match(text):
        scan.read(text, _pythonic_list, text)
    else:
        scan.text(text)


def _tagged(body: str) -> list[Found]:
    if _PYTHONIC_CALL.match(body):
        return _pythonic_list(body)
    if _BUILTIN_CALL.match(body):
        (call,) = _pythonic_list(f"[{body.strip()}]")
        return [found(call.name.removesuffix(".call"), call.arguments)]
    calls, end = _json_objects(body)
    if body[end:].strip(_SEPARATORS):
        raise ValueError("text after the calls")
    return calls


def _json_calls(answer: str, scan: Scan) -> None:
    """Calls at the start of the reply; text after complete calls stays in the answer. Without
    a tag, an object needs its arguments too: `{"name": "Bob", "age": 3}` is an answer in JSON."""
    try:
        calls, end = _json_objects(answer, ("parameters", "arguments"))
    except json.JSONDecodeError:  # cut short, or broken: a call that cannot be read
        scan.bad(answer)
        return
    except Exception:  # JSON that is not a call (untrusted text: any other error means that)
        scan.text(answer)
        return
    for call in calls:
        scan.call(call)
    scan.text(answer[end:])


def _json_objects(text: str, required: Sequence[str] = ()) -> tuple[list[Found], int]:
    """The JSON calls from the start of `text`, and where the last one ends; each object must
    hold one of the `required` keys when given."""
    calls: list[Found] = []
    pos = 0
    while True:
        data, pos = json_prefix(text, pos)
        if required and not (isinstance(data, dict) and any(key in data for key in required)):
            raise ValueError("an object without arguments")
        calls.append(found_in_json(data, ("parameters", "arguments")))
        rest = len(text) - len(text[pos:].lstrip(_SEPARATORS))
        if not text.startswith("{", rest):
            return calls, pos
        pos = rest


def _pythonic_list(text: str) -> list[Found]:
    tree = ast.parse(text.strip(), mode="eval").body
    if not isinstance(tree, ast.List) or not tree.elts:
        raise ValueError("not a list of calls")
    return [_pythonic_call(node) for node in tree.elts]


def _pythonic_call(node: ast.expr) -> Found:
    if not isinstance(node, ast.Call) or node.args:
        raise ValueError("a call takes keyword arguments only")
    arguments = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise ValueError("no ** in a call")
        arguments[keyword.arg] = ast.literal_eval(_JsonNames().visit(keyword.value))
    return found(_dotted(node.func), arguments)


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    raise ValueError("not a function name")


class _JsonNames(ast.NodeTransformer):
    """Templates write nested values as JSON, so `true`, `false` and `null` appear as names."""

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id not in _JSON_LITERALS:
            return node
        return ast.copy_location(ast.Constant(_JSON_LITERALS[node.id]), node)


_STARTED_NAME = re.compile(r'\s*(?:\{\s*"name"\s*:\s*"([^"\\]+)"|\[?\s*([A-Za-z_][\w.\-]*)\s*\()')


def llama3_calling(answer: str) -> str | None:
    tags = [(i, t) for t in _TAGS if (i := answer.find(t)) >= 0]
    if not tags:
        return _started(answer) if _starts_call(answer) else None
    at, tag = min(tags)
    inside, closed, after = answer[at + len(tag) :].partition(_PYTHON_END)
    if closed:
        if _starts_call(after):
            return _started(after)
        return _started(inside) if _starts_call(inside) or _BUILTIN_CALL.match(inside) else None
    if tag == _TAGS[0] or _starts_call(inside) or not inside.strip():
        return _started(inside)  # <|python_tag|> always opens a call
    return None  # Llama 4's python block holding the message's text, so far


def _started(text: str) -> str:
    match = _STARTED_NAME.match(text)
    return (match.group(1) or match.group(2) or "").removesuffix(".call") if match else ""
