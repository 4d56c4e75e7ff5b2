"""A reply's statistics in words: the short line under a finished reply (tokens, speed, time
to first token, what came from the cache) and the fuller list its tooltip shows.
"""

from __future__ import annotations

from collections.abc import Mapping


def format_stats(stats: Mapping[str, float]) -> str:
    """The line under a reply, e.g. "42 tokens · 38.1 tok/s · 0.21 s to first token · ...";
    a reply that filled the model's context says "context full"."""
    parts = []
    if "generated_tokens" in stats:
        generated = int(stats["generated_tokens"])
        parts.append(f"{generated:,} token{'' if generated == 1 else 's'}")
    if stats.get("finish_reason") == "context":
        parts.append("context full")
    if "decode_tps" in stats:
        parts.append(f"{stats['decode_tps']:,.1f} tok/s")
    if stats.get("drafted_tokens"):
        share = stats.get("accepted_tokens", 0) / stats["drafted_tokens"]
        parts.append(f"{share:.0%} of drafted tokens accepted")
    if "ttft_s" in stats:
        ttft = stats["ttft_s"]
        parts.append(f"{ttft:.{2 if ttft < 10 else 1}f} s to first token")
    if "cached_tokens" in stats:
        cached, disk = int(stats["cached_tokens"]), int(stats.get("disk_tokens", 0))
        if disk:
            parts.append(f"{cached:,} reused ({cached - disk:,} from memory, {disk:,} from disk)")
        else:
            parts.append(f"{cached:,} reused from cache")
    if stats.get("summary_of_tokens"):  # on a compacted branch
        parts.append(f"a summary stands for {int(stats['summary_of_tokens']):,} earlier tokens")
    return " · ".join(parts)


def stats_details(stats: Mapping[str, float]) -> str:
    """The stats line's tooltip: each number on its own line, in words."""
    labels = (
        ("prompt_tokens", "Prompt: {:,.0f} tokens"),
        ("cached_tokens", "Reused from cache: {:,.0f} tokens"),
        ("disk_tokens", "… of them read from saved caches on disk: {:,.0f}"),
        ("prefill_tokens", "Read afresh: {:,.0f} tokens"),
        ("prefill_tps", "Reading speed: {:,.1f} tok/s"),
        ("generated_tokens", "Generated: {:,.0f} tokens"),
        ("decode_tps", "Writing speed: {:,.1f} tok/s"),
        ("ttft_s", "Time to first token: {:.2f} s"),
        ("drafted_tokens", "Drafted ahead (speculative decoding): {:,.0f} tokens"),
        ("accepted_tokens", "Drafted tokens the model agreed with: {:,.0f}"),
        ("summary_of_tokens", "Earlier tokens the branch's summary stands for: {:,.0f}"),
    )
    lines = [text.format(stats[key]) for key, text in labels if key in stats]
    if stats.get("finish_reason") == "context":
        lines.append("The reply stopped because the model's context is full")
    return "\n".join(lines)
