"""The local server's settings and the rule that guards them: loopback by default, and any other
bind address only with an API key. Kept apart from the server (no aiohttp here) so preferences can
read and check them without loading it."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 1234


class ServerConfigError(ValueError):
    """Server settings that must not be used; the message says why, for the person."""


@dataclass(frozen=True)
class ServerConfig:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    api_key: str = ""
    cors_origins: tuple[str, ...] = field(default_factory=tuple)

    def check(self) -> None:
        """Raise ServerConfigError for a port out of range or a non-loopback bind without a key."""
        if not 0 <= self.port <= 65535:
            raise ServerConfigError(
                f"The port must be between 1 and 65535 (0: any free port), not {self.port}."
            )
        if not is_loopback(self.host) and not self.api_key:
            raise ServerConfigError(
                f"Serving on {self.host or 'every address'} makes the model reachable from other "
                "computers, so it needs an API key. Set one, or serve on 127.0.0.1."
            )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
