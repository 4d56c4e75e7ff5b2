"""Tiny models whose chat templates behave like reasoning models' templates.

`SWITCH_TEMPLATE` reads `enable_thinking` as Qwen3's does: off, the generation prompt holds an
empty, closed block so the model answers at once. `STRIPPING_TEMPLATE` drops the reasoning from
earlier assistant turns (everything up to `</think>`), as Qwen3's and DeepSeek-R1's do, and opens
the block in the generation prompt, so the reply starts inside it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

SWITCH_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
    "{% if enable_thinking is defined and enable_thinking is false %}"
    "{{ '<think>\\n\\n</think>\\n\\n' }}{% endif %}{% endif %}"
)
STRIPPING_TEMPLATE = (
    "{% for message in messages %}"
    "{% set content = message['content'] %}"
    "{% if message['role'] == 'assistant' and '</think>' in content %}"
    "{% set content = content.split('</think>')[-1].lstrip('\\n') %}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + content + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n<think>\\n' }}{% endif %}"
)


def with_template(source: Path, target: Path, template: str) -> Path:
    """A copy of the model folder `source` at `target` with `template` as its chat template."""
    folder = Path(shutil.copytree(source, target))
    config_file = folder / "tokenizer_config.json"
    config = json.loads(config_file.read_text())
    config["chat_template"] = template
    config_file.write_text(json.dumps(config))
    return folder
