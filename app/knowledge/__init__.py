"""Knowledge folders: a person's documents, indexed beside the chats, searched for each new user
message. What a retrieval found is an `Excerpt` (`excerpts`): plain values kept on the user
message that asked, so the prompt of a past turn is rendered from stored text and never changes.

Documents are read by `parsing` (one module per format, streamed, every bad input refused with
a reason), cut into chunks (`chunking`) and kept in their own SQLite file, `knowledge.db`
(`schema`, `database`): folders and documents (`catalog`), FTS5 over the chunks and float16
vectors per embedding model. An index run (`sync`: the folder listed by `scanning`, each file
written by `document_writer`, vectors by `embedding_run`) is incremental, resumable, reports
its progress (`progress_meter`) and waits at a pause gate while a reply generates (`pause`).
Search fuses BM25 with exact vector search in memory (`search`, `vectors`); `retrieval` budgets
what a turn is given in the chat model's tokens; `context` finds an old turn's excerpt again in
its page, or the text around it, for the window to show it in place. `index.KnowledgeIndex` is
what the app and the command line (`cli`, `branchwise knowledge`) use; an embedding model is
anything that fills the `embedder.Embedder` protocol: the built-in one (`builtin_embedder`,
numpy), a library model on the inference worker (`worker_embedder`), or none (BM25 alone), as
the preference chooses (`embedder_choice`).

May import: `app.sizes`, `app.paths`, `app.kept_files`, `app.store` (the database file's opening
and migrations, and the FTS5 query builder), `app.library` (the built-in embedding model's files,
the library's embedding models), `numpy` (vectors), `pypdf` (PDF text), and `inference` lazily:
`inference.errors`, the MLX-free `inference.embedding.static_model` and
`inference.embedding.folder` where an embedder is made, and `inference.embedding.encoder` inside
jobs on the inference worker only.

Never Qt or `ui`, and no `inference` at import time: the index runs from the command line, off
the GUI thread and before MLX loads.
"""
