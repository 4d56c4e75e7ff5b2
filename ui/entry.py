"""The `branchwise` command: `branchwise serve ...` runs the headless server (no window, no
QtWidgets, no display needed), `branchwise tools ...` lists or calls MCP tools,
`branchwise import ...` / `branchwise export ...` bring chat history in and back up every
conversation, `branchwise replay ...` generates a stored reply again and compares it,
`branchwise knowledge ...` indexes and searches knowledge folders, `branchwise models ...` scans
for models other apps hold, adds one and lists the library, `branchwise transcribe ...` prints
what an audio file says and `branchwise say ...` writes text spoken by the built-in voice;
anything else starts the app."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve"]:
        from app.server.serve_cli import main as serve

        return serve(argv[1:])
    if argv[:1] == ["tools"]:
        from app.mcp.cli import main as tools

        return tools(argv[1:])
    if argv[:1] in (["import"], ["export"]):
        from app.importers.cli import main as history

        return history(argv)
    if argv[:1] == ["knowledge"]:
        from app.knowledge.cli import main as knowledge

        return knowledge(argv[1:])
    if argv[:1] == ["models"]:
        from app.discovery.cli import main as models

        return models(argv[1:])
    if argv[:1] == ["replay"]:
        from app.replay.cli import main as replay

        return replay(argv[1:])
    if argv[:1] == ["transcribe"]:
        from ui.voice.cli import transcribe_main

        return transcribe_main(argv[1:])
    if argv[:1] == ["say"]:
        from ui.voice.cli import say_main

        return say_main(argv[1:])
    from ui.main import main as run_app

    return run_app(argv)


if __name__ == "__main__":
    sys.exit(main())
