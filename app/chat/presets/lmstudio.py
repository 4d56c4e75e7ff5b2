"""LM Studio's preset files (its `config-presets` folder, or a file shared by hand) read into a
Branchwise preset, saying by name what cannot be carried.

A file is `{"identifier": "@local:…", "name": …, "operation": {"fields": [{"key", "value"}]},
"load": {"fields": […]}}`; the keys are LM Studio's config keys (lmstudio-js,
`packages/lms-kv-config/src/schema.ts`). Switches with a value are `{"checked", "value"}`:
an unchecked one is off. What maps:

    llm.prediction.systemPrompt              system prompt
    llm.prediction.temperature               temperature
    llm.prediction.topPSampling              top-p (off: 1)
    llm.prediction.topKSampling              top-k (0 or less: off)
    llm.prediction.minPSampling              min-p (off: 0)
    llm.prediction.repeatPenalty             repetition penalty (off: 1)
    llm.prediction.maxPredictedTokens        max tokens (LM Studio's "no limit" cannot be)
    llm.prediction.seed                      seed (off or -1: none)
    llm.prediction.contextOverflowPolicy     overflow, when Branchwise has that policy
    llm.load.contextLength                   context length

Everything else is named in `left_out`: stop strings, structured output, LM Studio's prompt
template and tool settings, its draft model (a model of LM Studio's own library), llama.cpp's
samplers and load settings.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from app.chat.presets.bundle import PresetSettings
from app.settings import MIN_CONTEXT_LENGTH, OVERFLOW_POLICIES

MAX_FILE_BYTES = 4 * 1024 * 1024
# LM Studio's overflow policies and Branchwise's of the same meaning; a policy whose match is
# not among Branchwise's (`app.settings.OVERFLOW_POLICIES`) is left out, saying so.
_OVERFLOW = {"truncateMiddle": "truncate_middle", "rollingWindow": "rolling", "stopAtLimit": "stop"}
# What the keys left out are, for the person.
_NAMES = {
    "llm.prediction.stopStrings": "stop strings",
    "llm.prediction.toolCallStopStrings": "tool-call stop strings",
    "llm.prediction.structured": "structured output (JSON schema)",
    "llm.prediction.tools": "LM Studio's tool settings",
    "llm.prediction.promptTemplate": "LM Studio's prompt template",
    "llm.prediction.contextPrefill": "context prefill",
    "llm.prediction.logProbs": "log probabilities",
    "llm.prediction.reasoning.parsing": "LM Studio's reasoning parsing",
    "llm.prediction.speculativeDecoding.draftModel": "the draft model (a model of LM Studio's)",
    "llm.prediction.llama.cpuThreads": "CPU threads",
    "llm.prediction.llama.frequencyPenalty": "frequency penalty",
    "llm.prediction.llama.presencePenalty": "presence penalty",
    "llm.prediction.llama.mirostatSampling": "Mirostat sampling",
    "llm.prediction.llama.xtcProbability": "XTC probability",
    "llm.prediction.llama.xtcThreshold": "XTC threshold",
    "llm.prediction.llama.tailFreeSampling": "tail-free sampling",
    "llm.prediction.llama.locallyTypicalSampling": "locally typical sampling",
    "llm.prediction.llama.logitBias": "logit bias",
    "llm.load.llama.acceleration.offloadRatio": "GPU offload",
    "llm.load.llama.flashAttention": "flash attention",
    "llm.load.llama.kCacheQuantizationType": "K cache quantization",
    "llm.load.llama.vCacheQuantizationType": "V cache quantization",
    "llm.load.mlx.kvCacheQuantization": "KV cache quantization",
    "llm.load.numExperts": "number of experts",
}


class PresetFileError(Exception):
    """The file is no LM Studio preset Branchwise can read; the message says why."""


@dataclass(frozen=True)
class ImportedPreset:
    name: str
    settings: PresetSettings
    left_out: tuple[str, ...] = field(default=())  # what could not be carried, by name


def read_lmstudio_preset(path: Path) -> ImportedPreset:
    """Read one LM Studio preset file. Raises PresetFileError (nothing else) when it cannot."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise PresetFileError(f"{path.name} is too large for a preset ({size:,} bytes).")
        data = json.loads(path.read_bytes().decode("utf-8-sig"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise PresetFileError(f"{path.name} could not be read as JSON: {exc}") from None
    if not isinstance(data, dict) or not ("operation" in data or "load" in data):
        raise PresetFileError(
            f"{path.name} is not an LM Studio preset (it has no “operation” or “load” fields)."
        )
    preset = cast("dict[str, Any]", data)
    name = preset.get("name")
    name = name.strip() if isinstance(name, str) and name.strip() else path.stem
    fields = {**_fields(preset.get("load")), **_fields(preset.get("operation"))}
    return _converted(name.splitlines()[0], fields)


def _fields(section: object) -> dict[str, Any]:
    """A section's fields as {key: value}; malformed entries are skipped."""
    raw = section.get("fields") if isinstance(section, dict) else None
    found: dict[str, Any] = {}
    for entry in cast("list[object]", raw) if isinstance(raw, list) else []:
        if isinstance(entry, dict):
            item = cast("dict[str, Any]", entry)
            if isinstance(item.get("key"), str):
                found[item["key"]] = item.get("value")
    return found


def _converted(name: str, fields: Mapping[str, Any]) -> ImportedPreset:
    params: dict[str, Any] = {}
    left_out: list[str] = []
    system = ""
    for key, value in fields.items():
        taken = _take(key, value, params)
        if key == "llm.prediction.systemPrompt" and isinstance(value, str):
            system, taken = value, True
        if not taken:
            left_out.append(_NAMES.get(key, key))
    return ImportedPreset(name, PresetSettings(system, None, params), tuple(left_out))


def _take(key: str, value: Any, params: dict[str, Any]) -> bool:
    """Put the field's meaning into `params`; False when it has none here."""
    checked, number = _switch(value)
    if key == "llm.prediction.temperature" and number is not None:
        params["temperature"] = min(2.0, max(0.0, number))
    elif key == "llm.prediction.topPSampling" and number is not None:
        params["top_p"] = min(1.0, max(0.0, number)) if checked else 1.0
    elif key == "llm.prediction.topKSampling" and number is not None:
        params["top_k"] = max(0, int(number))
    elif key == "llm.prediction.minPSampling" and number is not None:
        params["min_p"] = min(1.0, max(0.0, number)) if checked else 0.0
    elif key == "llm.prediction.repeatPenalty" and number is not None:
        params["repetition_penalty"] = min(2.0, max(0.5, number)) if checked else 1.0
    elif key == "llm.prediction.maxPredictedTokens" and number is not None and checked:
        params["max_tokens"] = max(1, int(number))
    elif key == "llm.prediction.seed" and number is not None:
        params["seed"] = int(number) if checked and number >= 0 else None
    elif key == "llm.load.contextLength" and number is not None and number >= MIN_CONTEXT_LENGTH:
        params["context_length"] = int(number)
    elif key == "llm.prediction.contextOverflowPolicy" and _overflow(value) is not None:
        params["overflow"] = _overflow(value)
    else:
        return False
    return True


def _overflow(value: object) -> str | None:
    policy = _OVERFLOW.get(value) if isinstance(value, str) else None
    return policy if policy in OVERFLOW_POLICIES else None


def _switch(value: object) -> tuple[bool, float | None]:
    """(checked, number) of a plain number or a `{"checked", "value"}` switch; the number is
    None when there is no finite one."""
    checked = True
    if isinstance(value, dict):
        switch = cast("dict[str, Any]", value)
        checked = switch.get("checked") is not False
        value = switch.get("value")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return checked, None
    return checked, float(value)
