"""The Knowledge page: the person's knowledge folders with their state, progress and failures,
and adding, re-indexing, cancelling, showing and removing them (`knowledge_page`, made of the
folder list, `folder_list`, and one folder's detail, `folder_detail`, with its files not
indexed, `failure_list`); naming a new folder (`add_folder_dialog`); what each state is called
(`folder_state`); the embedding model every folder uses (`embedding_choice`).

May import: `PySide6`, `ui.text`, `ui.widgets`, `ui.sidebar` (its row delegate paints the
folder list as it paints conversations), `app.operations` (the app's knowledge
activity, the overview read off the GUI thread, the change notifier) and
`app.knowledge.records` (the index's plain values), `app.knowledge.embedder_choice`,
`app.library.embedded_model` and `app.settings` (the embedding model the folders use, a
preference chosen on the page, and the built-in one's name).

Never `ui.window`, and never the index itself: the page reads it through the operations, off
the GUI thread.
"""
