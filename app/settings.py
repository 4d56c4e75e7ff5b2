"""App preferences that are not per conversation: cache budgets, the default overflow policy,
how chats are summarised, theme, window state, the local server, each model's draft model and
image detail, the embedding model of knowledge folders, the knowledge a new chat reads and how
much of a turn its excerpts may take.

Stored with QSettings in an INI file inside the data folder, so `--data-dir` isolates them too.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, SupportsIndex, SupportsInt

import psutil
from PySide6.QtCore import QByteArray, QSettings

from app.server.config import DEFAULT_HOST, DEFAULT_PORT, ServerConfig

Theme = Literal["system", "light", "dark"]
THEMES: tuple[Theme, ...] = ("system", "light", "dark")
# What a chat does when it outgrows the model's context: the engine's policies
# (`inference.context_fit.OVERFLOW_POLICIES`, which app may not import before MLX loads).
OVERFLOW_POLICIES = ("truncate_middle", "rolling", "stop", "summarise")
DEFAULT_OVERFLOW = "truncate_middle"
# The shortest context length a chat may set (`inference.context_fit.MIN_CONTEXT_LIMIT`).
MIN_CONTEXT_LENGTH = 256
DEFAULT_MAX_TOOL_CALLS = 8
# "On the CPU, trade memory for speed": when weights become float32 on MLX's CPU backend
# (`inference.cpu.float32_weights.POLICIES`).
CPU_FLOAT32_POLICIES = ("auto", "always", "never")
# The image detail a model may be given: the longest edge, in pixels, each image is shown at
# (the engine's "detail"; without one, the model's processor sizes images its own way).
IMAGE_DETAILS = (512, 768, 1024, 1536, 2048)


@dataclass(frozen=True, slots=True)
class SummarySettings:
    """How chats are summarised into compacted branches (`app.compaction`): the last turns
    kept word for word below a summary, the share of the context at which "Summarise older
    turns" acts, whether it then summarises before the next reply (else it proposes to), and
    the library model that writes summaries (None: the chat's own)."""

    keep_turns: int = 2
    threshold: float = 0.8
    automatic: bool = False
    model_id: str | None = None


KEEP_TURNS_RANGE = (0, 10)
THRESHOLD_RANGE = (0.5, 0.95)


def chat_context_length(model_context: int | None, params: dict[str, Any]) -> int | None:
    """The context a chat's prompt must fit: its own "context_length" when that is a usable
    limit below the model's, else the model's. (A limit the engine would refuse is not applied
    here: sending says why.)"""
    limit = params.get("context_length")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < MIN_CONTEXT_LENGTH:
        return model_context
    return limit if model_context is None else min(model_context, limit)


def default_cache_budget_bytes() -> int:
    """A quarter of the machine's RAM: room for the weights and the rest of the system."""
    return int(psutil.virtual_memory().total // 4)


def _int(value: object) -> int:
    """`int(value)` for a setting as QSettings reads it back, typed `object`: a str from the INI
    file, or the default it was given. TypeError, as `int` raises, for what is no number."""
    if isinstance(value, str | bytes | bytearray | SupportsInt | SupportsIndex):
        return int(value)
    raise TypeError(f"{value!r} is not a number")


def _clamp[N: (int, float)](value: object, low: N, high: N, default: N) -> N:
    """`value` within [low, high] when it is a number of `default`'s kind, else `default`."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return type(default)(min(max(value, low), high))


class Preferences:
    def __init__(self, path: Path) -> None:
        self._qs = QSettings(str(path), QSettings.Format.IniFormat)

    @property
    def cache_budget_bytes(self) -> int:
        value = self._qs.value("cache/budget_bytes", default_cache_budget_bytes())
        try:
            return max(0, _int(value))
        except (TypeError, ValueError):
            return default_cache_budget_bytes()

    @cache_budget_bytes.setter
    def cache_budget_bytes(self, value: int) -> None:
        self._qs.setValue("cache/budget_bytes", int(value))

    @property
    def disk_budget_bytes(self) -> int | None:
        """Room for saved caches; None: the engine's default (the smaller of 30 GiB and a
        quarter of the free space, which only the worker can work out)."""
        value = self._qs.value("cache/disk_budget_bytes", None)
        try:
            return max(0, _int(value)) if value not in (None, "") else None
        except (TypeError, ValueError):
            return None

    @disk_budget_bytes.setter
    def disk_budget_bytes(self, value: int | None) -> None:
        self._qs.setValue("cache/disk_budget_bytes", "" if value is None else int(value))

    @property
    def overflow_policy(self) -> str:
        """The overflow policy of chats that have not chosen their own."""
        value = str(self._qs.value("chat/overflow", DEFAULT_OVERFLOW))
        return value if value in OVERFLOW_POLICIES else DEFAULT_OVERFLOW

    @overflow_policy.setter
    def overflow_policy(self, value: str) -> None:
        if value not in OVERFLOW_POLICIES:
            raise ValueError(
                f"Unknown overflow policy {value!r}; choose one of {', '.join(OVERFLOW_POLICIES)}."
            )
        self._qs.setValue("chat/overflow", value)

    @property
    def summaries(self) -> SummarySettings:
        """How chats are summarised; a value out of range (hand-edited file) is brought in."""
        saved = self._json_object("chat/summaries")
        default = SummarySettings()
        keep, share = saved.get("keep_turns"), saved.get("threshold")
        model = saved.get("model_id")
        return SummarySettings(
            keep_turns=_clamp(keep, *KEEP_TURNS_RANGE, default.keep_turns),
            threshold=float(_clamp(share, *THRESHOLD_RANGE, default.threshold)),
            automatic=saved.get("automatic") is True,
            model_id=model if isinstance(model, str) and model else None,
        )

    @summaries.setter
    def summaries(self, value: SummarySettings) -> None:
        self._qs.setValue("chat/summaries", json.dumps(asdict(value)))

    @property
    def cpu_float32(self) -> str:
        """When a model runs as float32 on the CPU: "auto" (when it fits), "always", "never"."""
        value = str(self._qs.value("cpu/float32_weights", "auto"))
        return value if value in CPU_FLOAT32_POLICIES else "auto"

    @cpu_float32.setter
    def cpu_float32(self, value: str) -> None:
        if value not in CPU_FLOAT32_POLICIES:
            raise ValueError(
                f"Unknown choice {value!r}; choose one of {', '.join(CPU_FLOAT32_POLICIES)}."
            )
        self._qs.setValue("cpu/float32_weights", value)

    @property
    def theme(self) -> Theme:
        value = str(self._qs.value("ui/theme", "system"))
        return value if value in THEMES else "system"

    @theme.setter
    def theme(self, value: str) -> None:
        if value not in THEMES:
            raise ValueError(f"Unknown theme {value!r}; choose one of {', '.join(THEMES)}.")
        self._qs.setValue("ui/theme", value)

    @property
    def model_id(self) -> str | None:
        value = self._qs.value("models/last", None)
        return str(value) if value else None

    @model_id.setter
    def model_id(self, value: str | None) -> None:
        self._qs.setValue("models/last", value or "")

    @property
    def default_model_id(self) -> str | None:
        """The library model (folder name) new chats start with; None: the model loaded now."""
        value = self._qs.value("models/default", None)
        return str(value) if value else None

    @default_model_id.setter
    def default_model_id(self, value: str | None) -> None:
        self._qs.setValue("models/default", value or "")

    @property
    def knowledge_embedder(self) -> str | None:
        """The embedding model of knowledge folders, as `app.knowledge.embedder_choice` writes
        it ("none", "builtin", "model:<library id>"); None: never chosen (the app's default)."""
        value = self._qs.value("knowledge/embedder", None)
        return str(value) if value else None

    @knowledge_embedder.setter
    def knowledge_embedder(self, value: str | None) -> None:
        self._qs.setValue("knowledge/embedder", value or "")

    @property
    def default_system_prompt(self) -> str:
        """The system prompt new chats start with ("" for none)."""
        return str(self._qs.value("chat/system_prompt", "") or "")

    @default_system_prompt.setter
    def default_system_prompt(self, value: str) -> None:
        self._qs.setValue("chat/system_prompt", value)

    @property
    def default_params(self) -> dict[str, Any]:
        """Sampling parameters new chats start with, over Branchwise's own defaults ({}: none
        chosen). An unreadable value (hand-edited file) counts as none chosen."""
        return self._json_object("chat/params")

    @default_params.setter
    def default_params(self, value: dict[str, Any]) -> None:
        self._qs.setValue("chat/params", json.dumps(value))

    def draft_model_for(self, model_id: str) -> str | None:
        """The draft model (folder name) chosen for `model_id` by default, if any."""
        value = self._json_object("models/drafts").get(model_id)
        return value if isinstance(value, str) and value else None

    def set_draft_model_for(self, model_id: str, draft_id: str | None) -> None:
        self._set_for_model("models/drafts", model_id, draft_id or None)

    def image_detail_for(self, model_id: str) -> int | None:
        """The longest edge, in pixels, `model_id` is shown images at; None: what its own
        processor takes. A value not offered (hand-edited file) counts as none chosen."""
        value = self._json_object("models/image_detail").get(model_id)
        return value if value in IMAGE_DETAILS and not isinstance(value, bool) else None

    def set_image_detail_for(self, model_id: str, detail: int | None) -> None:
        if detail is not None and detail not in IMAGE_DETAILS:
            raise ValueError(
                f"Unknown image detail {detail!r}; choose one of "
                f"{', '.join(map(str, IMAGE_DETAILS))} pixels, or none."
            )
        self._set_for_model("models/image_detail", model_id, detail)

    def _set_for_model(self, key: str, model_id: str, value: str | int | None) -> None:
        """Keep `value` for `model_id` in the JSON object at `key` (None: forget its choice)."""
        chosen = self._json_object(key)
        if value is None:
            chosen.pop(model_id, None)
        else:
            chosen[model_id] = value
        self._qs.setValue(key, json.dumps(chosen))

    def _json_object(self, key: str) -> dict[str, Any]:
        try:
            value = json.loads(str(self._qs.value(key, "") or "{}"))
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def _names(self, key: str) -> list[str] | None:
        """A JSON list of names kept under `key`; None when none was kept (or it is damaged)."""
        value = self._qs.value(key, "")
        try:
            names = json.loads(str(value)) if value not in (None, "") else None
        except ValueError:
            return None
        if isinstance(names, list) and all(isinstance(n, str) for n in names):
            return names
        return None

    @property
    def default_tool_servers(self) -> list[str] | None:
        """The MCP servers a new chat may use (the built-in tools are "branchwise"); None:
        every server."""
        return self._names("tools/default_servers")

    @default_tool_servers.setter
    def default_tool_servers(self, value: list[str] | None) -> None:
        self._qs.setValue("tools/default_servers", "" if value is None else json.dumps(value))

    @property
    def default_knowledge(self) -> list[str]:
        """The knowledge collections a new chat reads (none unless chosen)."""
        return self._names("knowledge/default_collections") or []

    @default_knowledge.setter
    def default_knowledge(self, value: list[str]) -> None:
        self._qs.setValue("knowledge/default_collections", json.dumps(list(value)))

    @property
    def knowledge_budget_tokens(self) -> int:
        """The most tokens a turn's knowledge excerpts take; 0: a quarter of the context."""
        try:
            return max(0, _int(self._qs.value("knowledge/budget_tokens", 0)))
        except (TypeError, ValueError):
            return 0

    @knowledge_budget_tokens.setter
    def knowledge_budget_tokens(self, value: int) -> None:
        self._qs.setValue("knowledge/budget_tokens", max(0, int(value)))

    @property
    def max_tool_calls(self) -> int:
        """Calls one reply may make before it stops and asks to go on."""
        try:
            return max(1, _int(self._qs.value("tools/max_calls", DEFAULT_MAX_TOOL_CALLS)))
        except (TypeError, ValueError):
            return DEFAULT_MAX_TOOL_CALLS

    @max_tool_calls.setter
    def max_tool_calls(self, value: int) -> None:
        self._qs.setValue("tools/max_calls", max(1, int(value)))

    @property
    def started_tool_servers(self) -> set[str]:
        """The MCP servers the person has started once (after seeing their command line);
        only these start by themselves."""
        value = self._qs.value("tools/started_servers", "")
        try:
            names = json.loads(str(value)) if value not in (None, "") else []
        except ValueError:
            return set()
        return {n for n in names if isinstance(n, str)} if isinstance(names, list) else set()

    def mark_tool_server_started(self, name: str) -> None:
        names = sorted(self.started_tool_servers | {name})
        self._qs.setValue("tools/started_servers", json.dumps(names))

    @property
    def last_conversation_id(self) -> int | None:
        value = self._qs.value("ui/last_conversation", None)
        try:
            return _int(value) if value not in (None, "") else None
        except (TypeError, ValueError):
            return None

    @last_conversation_id.setter
    def last_conversation_id(self, value: int | None) -> None:
        self._qs.setValue("ui/last_conversation", "" if value is None else int(value))

    @property
    def server_enabled(self) -> bool:
        """Whether the window serves its model to other apps (off unless the person turns it on)."""
        return str(self._qs.value("server/enabled", "false")).lower() == "true"

    @server_enabled.setter
    def server_enabled(self, value: bool) -> None:
        self._qs.setValue("server/enabled", "true" if value else "false")

    @property
    def server_config(self) -> ServerConfig:
        try:
            port = _int(self._qs.value("server/port", DEFAULT_PORT))
        except (TypeError, ValueError):
            port = DEFAULT_PORT
        origins = str(self._qs.value("server/cors_origins", "") or "")
        return ServerConfig(
            host=str(self._qs.value("server/host", DEFAULT_HOST) or DEFAULT_HOST),
            port=port,
            api_key=str(self._qs.value("server/api_key", "") or ""),
            cors_origins=tuple(origins.split()),
        )

    @server_config.setter
    def server_config(self, config: ServerConfig) -> None:
        self._qs.setValue("server/host", config.host)
        self._qs.setValue("server/port", int(config.port))
        self._qs.setValue("server/api_key", config.api_key)
        self._qs.setValue("server/cors_origins", " ".join(config.cors_origins))

    @property
    def export_folder(self) -> Path:
        """Where the last export went (the home folder until then, or once it is gone)."""
        folder = Path(str(self._qs.value("files/export_folder", "") or Path.home()))
        return folder if folder.is_dir() else Path.home()

    @export_folder.setter
    def export_folder(self, value: Path) -> None:
        self._qs.setValue("files/export_folder", str(value))

    def window_state(self, key: str) -> QByteArray | None:
        value = self._qs.value(f"window/{key}")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_window_state(self, key: str, value: QByteArray) -> None:
        self._qs.setValue(f"window/{key}", value)

    def sync(self) -> None:
        self._qs.sync()
