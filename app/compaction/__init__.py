"""Compaction as a branch: a long chat summarised into a new branch that goes on from the
summary and the last turns kept word for word, with the full chat untouched beside it (`‹ n/m ›`
on the first message). *Summarise up to Here*, `/compact` and the overflow policy *Summarise
older turns* all make one (`compactor`); what is summarised and kept, and what the model is
asked (`plan`); the summary written as a reply is (`summary_run`); the earlier tokens it stands
for and when a chat is due (`tokens`); which model writes it (`writer`); the same question
asked of the full chat, for a side by side (`full_chat`); what the window is told (`events`).

May import: `PySide6.QtCore`, `app.store`, `app.generation`, `app.library`, `app.remote` (a type),
and `app.settings`.
"""
