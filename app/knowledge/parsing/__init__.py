"""A person's documents read as text, streamed in `Block`s (`blocks`): plain text, Markdown and
source code (`text_files`), CSV and JSON (`tabular`), HTML (`html_text`), PDF (`pdf_text`),
DOCX and EPUB (`office`, their zip members read within limits by `zip_members`), each chosen by
the file's extension (`formats`). MLX-free and Qt-free; files are only ever opened for reading.

Part of `app.knowledge`, under its import rules.
"""
