"""Knowledge folders: a person's documents, indexed beside the chats, searched for each new user
message. What a retrieval found is an `Excerpt` (`excerpts`): plain values kept on the user
message that asked, so the prompt of a past turn is rendered from stored text and never changes.

May import: `app.sizes`, `app.paths` and `app.kept_files`.

Never Qt widgets, `ui`, or `inference` at import time: the window shows before MLX loads.
"""
