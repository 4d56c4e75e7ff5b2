"""From messages to token ids: the chat template rendered (with its checks and reasoning
switches), what to leave out when a conversation outgrows the context, and a reply split into
reasoning and answer.

May import: `mlx_lm` (its tokenizer helpers), `jinja2` and `inference.errors`.

Never `engine` or `cache`.
"""
