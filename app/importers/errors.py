"""The importers' one error: a file, an archive member or one conversation refused, with a
sentence for the person (what was wrong and where). Nothing else escapes an importer on bad
input."""

from __future__ import annotations


class ImportRefusedError(Exception):
    """Input that cannot be imported; `str(error)` is written for people."""
