"""Branchwise inference: exact, cache-aware generation on MLX with mlx-lm.

Public API (everything runs on one thread, the inference worker's, which owns every MLX object;
results hold plain Python values only)::

    from inference import load_model, Engine, SamplingParams, InferenceError

    model = load_model(path)          # an MLX model folder -> LoadedModel
    engine = Engine(model, cache_budget_bytes=None, prefill_chunk_tokens=512)
    result = engine.generate(
        messages,                     # [{"role": "system"|"user"|"assistant", "content": str
                                      #   or [parts: text and images, see below]}, ...]
        SamplingParams(temperature=0.0, top_p=1.0, top_k=0, min_p=0.0,
                       repetition_penalty=1.0, max_tokens=512, seed=None, stop=(),
                       logit_bias={}),  # {token id (int or decimal str): added to its logit}
        conversation_id=None,         # any hashable; ties and forget() use it
        on_token=None,                # on_token(text_delta: str)
        on_progress=None,             # on_progress(done: int, total: int) during prefill
        cancel=None,                  # threading.Event: stops within one chunk / one token
        template_kwargs=None,         # chat-template switches, e.g. {"enable_thinking": False}
        overflow="truncate_middle",   # or "rolling", "stop": see inference.prompt.context_fit
        context_limit=None,           # the chat's own context length (>= 256), else the model's
    )

Images: a message's `content` may be a list of parts instead of text, in order:
`{"type": "text", "text": str}` and `{"type": "image", "image": path | bytes, "detail": int}`
(`image`: a file path (str or Path) or the file's bytes, PNG, JPEG, WebP, GIF (first frame),
BMP or TIFF; `detail`, optional: the longest edge in pixels the model is given, else what its
processor takes). Every image reaches the model where it was sent. A model reads them when
`LoadedModel.vision` is set (a vision model folder, `vision_config` in config.json, of a family
in `inference.vision.families`); otherwise an image is a `PromptError` naming the model and
`LoadedModel.text_only_reason` says why. A missing, damaged or truncated file, or one over 64
megapixels (a decompression bomb), is a PromptError naming it. The branch cache keys each image
by a digest of what the model sees, so replies stay exactly mlx-vlm's from-scratch ones while a
follow-up, a regenerate or a branch switch computes only new tokens, and each image's encoder
output is kept (within the cache budget) so it is encoded once (see inference.vision).

`load_model(path, cpu_float32="auto") -> LoadedModel` with `.model`, `.tokenizer`, `.config`,
`.path`, `.model_id` (the folder name), `.model_type`, `.context_length` (int or None),
`.weights_bytes` and `.weights_form` ("float32 (from 4-bit)", "4-bit", "bfloat16"...: on MLX's
CPU backend the weights become float32 where they fit, see `inference.cpu`). It reads
only safetensors and never runs code from the folder (models needing trust_remote_code are
refused). A missing folder or file, corrupt weights or an unsupported model type raise
`ModelLoadError`.

`GenerationResult`: `.text`, `.token_ids` (generated ids, with the end-of-sequence id when the
model ended the reply), `.finish_reason` ("stop", "length" or "cancelled") and `.stats`
(`GenerationStats`: `prompt_tokens`, `cached_tokens`, `prefill_tokens`, `generated_tokens`,
`ttft_s`, `prefill_tps`, `decode_tps`; `cached_tokens + prefill_tokens == prompt_tokens`).

`engine.generate_variants(messages, params, seeds=[1, 2, 3], conversation_id=None,
on_token=None, cancel=None)` returns one `GenerationResult` per seed, `results[i]` equal to
`generate(messages, replace(params, seed=seeds[i]))`: the prompt is computed once and the
variants decode as one batch (`on_token(variant_index, text_delta)`; `cancel` is one Event or
one per variant). Each result's stats count the shared prompt. `engine.cache_state(paths)`
returns, per message path, a `PathCacheState` (`inference.engine.cache_state`, no MLX):
`tokens`, `memory_tokens`, `disk_tokens`, `uncached_tokens`, `disk_bytes` and `tier` ("memory",
"disk" or "none").

`engine.complete(prompt, params, conversation_id=None, on_token=None, on_progress=None,
cancel=None)` continues a raw prompt (text, tokenized without the chat template, or token ids)
through the same prefill, cache and decoder as `generate`.

`Engine` also has `context_length`, `count_prompt_tokens(messages, template_kwargs=None) -> int`,
`cache_bytes()`, `clear_cache()`, `forget(conversation_id)` and a settable
`cache_budget_bytes` (default: a fifth of the machine's memory). Branching is implicit: a
regenerate, an edit or a branch switch is just another message path, and the engine reuses the
longest token prefix it has stored.

Every refusal is an `InferenceError`: `ModelLoadError` (loading), `PromptError` (empty or
malformed messages, unknown role, prompt longer than the context, by how many tokens),
`SamplingError` (settings out of range, e.g. `max_tokens` <= 0, or a `logit_bias` token id the
model's vocabulary does not have). The engine stays usable after
any of them.

Tool calls: `parse_reply(text, tool_format, thinking=False, tools=None) -> ParsedReply` reads a
finished reply into `.content`, `.reasoning`, `.tool_calls` (`ToolCall`: `.name`, `.arguments`
dict, `.id`) and `.malformed` (the raw text of calls that could not be read, also left in
`.content`); a call written inside the reasoning is not a call, and it never raises on the
reply's text. `TOOL_FORMATS` maps each format name ("hermes", "qwen3_coder", "llama3_json",
"mistral", "harmony", "gemma4", "glm47", "kimi_k2", "deepseek") to its `ToolFormat`
(`.families`: which models write it), and `tool_format_for(chat_template)` picks one from a
template's source (None: it takes no tools).
`inference.toolcalls.formats.call_in_progress(text, tool_format)` names the call a streaming
reply has begun.

`inference.loading.model_files` (the files a model folder holds, its context length) and
`inference.errors` need no MLX, so the app layer may import them at any time: the heavy modules
below load only when one of their names is first used (PEP 562). Importing this package first
loads the fast BLAS on Linux (`inference.cpu.fast_blas`), which must precede MLX in a process.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from inference.cpu.fast_blas import preload as _preload_blas

# Before anything under `inference` can import MLX (see inference.cpu.fast_blas).
_preload_blas()

if TYPE_CHECKING:
    from inference.decoding.sampling import SamplingParams
    from inference.engine.engine import Engine
    from inference.engine.engine_caches import default_cache_budget
    from inference.engine.result import GenerationResult, GenerationStats
    from inference.errors import InferenceError, ModelLoadError, PromptError, SamplingError
    from inference.importing.dhara import import_dhara
    from inference.importing.gguf_import import import_gguf
    from inference.loading.load import LoadedModel, load_model
    from inference.toolcalls.detect import tool_format_for
    from inference.toolcalls.formats import TOOL_FORMATS, parse_reply

# public name -> the module that defines it
_HOMES = {
    "Engine": "inference.engine.engine",
    "GenerationResult": "inference.engine.result",
    "GenerationStats": "inference.engine.result",
    "default_cache_budget": "inference.engine.engine_caches",
    "InferenceError": "inference.errors",
    "ModelLoadError": "inference.errors",
    "PromptError": "inference.errors",
    "SamplingError": "inference.errors",
    "import_gguf": "inference.importing.gguf_import",
    "import_dhara": "inference.importing.dhara",
    "LoadedModel": "inference.loading.load",
    "load_model": "inference.loading.load",
    "SamplingParams": "inference.decoding.sampling",
    "TOOL_FORMATS": "inference.toolcalls.formats",
    "parse_reply": "inference.toolcalls.formats",
    "tool_format_for": "inference.toolcalls.detect",
}

__all__ = [
    "TOOL_FORMATS",
    "Engine",
    "GenerationResult",
    "GenerationStats",
    "InferenceError",
    "LoadedModel",
    "ModelLoadError",
    "PromptError",
    "SamplingError",
    "SamplingParams",
    "default_cache_budget",
    "import_dhara",
    "import_gguf",
    "load_model",
    "parse_reply",
    "tool_format_for",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'inference' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
