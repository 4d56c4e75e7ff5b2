"""The conversation store: every conversation a tree of messages in SQLite (schema and migrations,
the connection, the tree, streaming replies and their writer, full-text search, export and
import formats, replies kept aside when the database refused them at close).

May import: `app.paths`, `app.sizes`, `app.kept_files`, `app.images` (the images
messages name, kept beside the database) and `app.knowledge.excerpts` (the form of the
knowledge excerpts a user message keeps).

Never Qt, `inference` or another `app` subpackage beyond those.
"""
