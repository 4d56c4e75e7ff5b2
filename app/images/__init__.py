"""Images attached to messages: their bytes checked with Pillow and kept once each, named by
their SHA-256, in the data folder's `images/`; messages hold only a small record naming the
digest (`StoredImage.as_record`), never the bytes.

May import: `PIL`, `pypdfium2` (scanned PDF pages) and `app.kept_files`.

Never Qt, `inference` or another `app` subpackage: the store, the prompt, export and the server all
build on it.
"""
