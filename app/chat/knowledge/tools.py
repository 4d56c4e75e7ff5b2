"""The built-in knowledge tools a tool-capable model gets in a chat that reads knowledge:
`search_knowledge` (excerpts for any query, not only the person's message) and `read_document`
(the documents listed, or one read whole, part by part: what "list / count / summarise all"
questions need and top-k retrieval cannot give). They read the chat's own collections, run on
the inference worker as a turn's retrieval does, and answer plain text, which the tool loop
caps and stores as a `tool` message like any other tool's result.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from app.generation.knowledge_block import excerpt_entry
from app.generation.knowledge_retrieval import DocumentInfo, KnowledgeBase, estimate_tokens
from app.mcp.builtin_search import READ_ONLY, search_schema
from app.mcp.config import BUILTIN_SERVER
from app.mcp.results import CHARS_PER_TOKEN, MAX_RESULT_CHARS, ToolFailure, ToolResult
from app.mcp.tool_info import ToolInfo

if TYPE_CHECKING:
    from app.generation.worker import InferenceWorker
    from app.knowledge.excerpts import Excerpt

DEFAULT_LIMIT = 8
MAX_LIMIT = 20
# A part of a document read whole: within one result's cap, with room for its heading.
PART_CHARS = MAX_RESULT_CHARS - 1000
_BAD = ToolFailure.BAD_ARGUMENTS

SEARCH_TOOL = ToolInfo(
    BUILTIN_SERVER,
    "search_knowledge",
    description=(
        "Search the user's documents (the knowledge collections this chat reads) for a query. "
        "Returns the best excerpts, numbered, each with its collection, file and page."
    ),
    input_schema=search_schema("what to look for, in words", "excerpts", DEFAULT_LIMIT, MAX_LIMIT),
    title="Search knowledge",
    annotations=READ_ONLY,
)
READ_TOOL = ToolInfo(
    BUILTIN_SERVER,
    "read_document",
    description=(
        "Without a file: list every document of the knowledge collections this chat reads. "
        "With a file (its name or path): read that document whole, one part at a time."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "file": {"type": "string", "description": "the document's file name or path"},
            "part": {"type": "integer", "minimum": 1, "description": "which part (default 1)"},
        },
    },
    title="Read document",
    annotations=READ_ONLY,
)
KNOWLEDGE_TOOLS: tuple[ToolInfo, ...] = (SEARCH_TOOL, READ_TOOL)
TOOL_NAMES = frozenset(tool.name for tool in KNOWLEDGE_TOOLS)


class KnowledgeTools:
    """`base()` is the index (None: none, and no tools); `collections(conversation_id)` what
    a chat reads."""

    def __init__(
        self,
        worker: InferenceWorker,
        base: Callable[[], KnowledgeBase | None],
        collections: Callable[[int], tuple[str, ...]],
    ) -> None:
        self._worker = worker
        self._base = base
        self._collections = collections

    def available(self) -> list[ToolInfo]:
        return list(KNOWLEDGE_TOOLS) if self._base() is not None else []

    async def call(
        self, name: str, arguments: dict[str, Any], conversation_id: int | None
    ) -> ToolResult:
        """Run tool `name` for the chat; bad arguments, no collections or a failing index come
        back as error results."""
        started = time.monotonic()
        base = self._base()
        collections = self._collections(conversation_id) if conversation_id is not None else ()
        if base is None or not collections:
            return ToolResult("This chat reads no knowledge collections.", ToolFailure.TOOL)
        if name == SEARCH_TOOL.name:
            job = _search_job(base, collections, arguments)
        else:
            job = _read_job(base, collections, arguments)
        if isinstance(job, ToolResult):
            return job
        result = await self._on_worker(job)
        return ToolResult(result.text, result.failure, time.monotonic() - started)

    async def _on_worker(self, job: Callable[[], ToolResult]) -> ToolResult:
        """`job()` on the inference worker thread (queued between generations)."""
        future: asyncio.Future[ToolResult] = asyncio.get_running_loop().create_future()

        def settle(result: ToolResult) -> None:
            if not future.done():  # a cancelled call's result is dropped
                future.set_result(result)

        self._worker.call(
            lambda _engine: job(),
            on_done=settle,
            on_error=lambda message: settle(
                ToolResult(f"The knowledge could not be read: {message}", ToolFailure.TOOL)
            ),
        )
        return await future


def _search_job(
    base: KnowledgeBase, collections: Sequence[str], arguments: dict[str, Any]
) -> Callable[[], ToolResult] | ToolResult:
    query, limit = arguments.get("query"), arguments.get("limit", DEFAULT_LIMIT)
    if not isinstance(query, str) or not query.strip():
        return ToolResult('search_knowledge needs a "query": what to look for.', _BAD)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        return ToolResult(f'"limit" must be a whole number from 1 to {MAX_LIMIT}.', _BAD)
    budget = MAX_RESULT_CHARS // CHARS_PER_TOKEN

    def job() -> ToolResult:
        found = base.retrieve(collections, query.strip(), "", budget, estimate_tokens)
        return ToolResult(search_text(query.strip(), found.excerpts[:limit]))

    return job


def _read_job(
    base: KnowledgeBase, collections: Sequence[str], arguments: dict[str, Any]
) -> Callable[[], ToolResult] | ToolResult:
    wanted, part = arguments.get("file"), arguments.get("part", 1)
    if wanted is not None and not isinstance(wanted, str):
        return ToolResult('"file" must be a document\'s file name or path.', _BAD)
    if isinstance(part, bool) or not isinstance(part, int) or part < 1:
        return ToolResult('"part" must be a whole number from 1.', _BAD)

    def job() -> ToolResult:
        documents = base.documents(collections)
        if not wanted or not wanted.strip():
            return ToolResult(document_list(documents))
        matches = matching(documents, wanted.strip())
        if len(matches) != 1:
            return ToolResult(unmatched(wanted.strip(), matches), _BAD)
        chunks = base.document_excerpts(collections, matches[0].path)
        return document_part(matches[0], whole_text(chunks), part)

    return job


def search_text(query: str, excerpts: Sequence[Excerpt]) -> str:
    if not excerpts:
        return f"Nothing in the knowledge matches {query!r}."
    count = f"{len(excerpts)} excerpt{'s' if len(excerpts) > 1 else ''}"
    entries = [excerpt_entry(number, e) for number, e in enumerate(excerpts, start=1)]
    return "\n\n".join([f"{count} for {query!r}:", *entries])


def document_list(documents: Sequence[DocumentInfo]) -> str:
    if not documents:
        return "The knowledge collections this chat reads hold no documents."
    names = [PurePath(d.path).name for d in documents]
    repeated = {name for name in names if names.count(name) > 1}
    lines = [f"{len(documents)} document{'s' if len(documents) > 1 else ''}:"]
    for document, name in zip(documents, names, strict=True):
        shown = document.path if name in repeated else name
        pages = f", {document.pages} pages" if document.pages else ""
        lines.append(f"- {shown} ({document.collection}{pages})")
    return "\n".join(lines)


def matching(documents: Sequence[DocumentInfo], wanted: str) -> list[DocumentInfo]:
    """The documents `wanted` names: by path, else by file name (ignoring case)."""
    by_path = [d for d in documents if d.path == wanted]
    if by_path:
        return by_path
    return [d for d in documents if PurePath(d.path).name.casefold() == wanted.casefold()]


def unmatched(wanted: str, matches: Sequence[DocumentInfo]) -> str:
    if not matches:
        return f"No document is named {wanted!r}; call read_document without a file for the list."
    paths = "\n".join(f"- {d.path}" for d in matches)
    return f"Several documents are named {wanted!r}; give one of these paths:\n{paths}"


def whole_text(chunks: Sequence[Excerpt]) -> str:
    """A document's text from its chunks in order, overlaps removed, pages marked."""
    parts: list[str] = []
    page: int | None = None
    end = 0
    for chunk in sorted(chunks, key=lambda c: (c.page or 0, c.start)):
        same_page = bool(parts) and chunk.page == page
        if same_page and chunk.start < end:
            parts.append(chunk.text[end - chunk.start :])
        else:
            if chunk.page is not None and not same_page:
                parts.append(("\n\n" if parts else "") + f"[page {chunk.page}]\n")
            elif parts:
                parts.append("\n\n")
            parts.append(chunk.text)
        end = max(end, chunk.end) if same_page else chunk.end
        page = chunk.page
    return "".join(parts)


def document_part(document: DocumentInfo, text: str, part: int) -> ToolResult:
    name = f"{PurePath(document.path).name} ({document.collection})"
    parts = max(1, -(-len(text) // PART_CHARS))
    if part > parts:
        return ToolResult(f"{name} has {parts} part{'s' if parts > 1 else ''}.", _BAD)
    piece = text[(part - 1) * PART_CHARS : part * PART_CHARS]
    more = f"; ask for part {part + 1} for more" if part < parts else ""
    return ToolResult(f"{name}, part {part} of {parts}{more}:\n\n{piece}")
