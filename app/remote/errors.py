"""The error of a failed request to a remote server, apart from `app.remote.client` so code can
catch it without importing the openai package (seconds to import)."""

from __future__ import annotations


class RemoteError(Exception):
    """A request that failed; `str()` is a message for the person. `interrupted` is True when
    the server went away after the reply had begun (its text so far is still good)."""

    def __init__(self, message: str, *, interrupted: bool = False) -> None:
        super().__init__(message)
        self.interrupted = interrupted
