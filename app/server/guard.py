"""What keeps the local server safe and its errors readable: the bind rules, the Host check, the API
key, CORS for listed origins only, and OpenAI-style JSON error bodies for every failure.

A server on loopback can still be reached by a web page through DNS rebinding (a name that
resolves to 127.0.0.1), so the Host header must name the bound address; any other bind address
exposes the model to the network and needs an API key, compared in constant time.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from app.server.config import ServerConfig, is_loopback

_log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
_WILDCARDS = ("0.0.0.0", "::", "")
_CORS_METHODS = "GET, POST, OPTIONS"
_CORS_HEADERS = "authorization, content-type, openai-organization, openai-project, x-stainless-*"


class ApiError(Exception):
    """A failure answered as `{"error": {"message", "type", "param", "code"}}` with `status`."""

    def __init__(
        self,
        status: int,
        message: str,
        code: str | None = None,
        param: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.param = param
        self.headers = headers or {}

    @property
    def type(self) -> str:
        if self.status == 401:
            return "authentication_error"
        if self.status == 404:
            return "not_found_error"
        if self.status < 500:
            return "invalid_request_error"
        return "server_error"

    def body(self) -> dict:
        return {
            "error": {
                "message": self.message,
                "type": self.type,
                "param": self.param,
                "code": self.code,
            }
        }

    def response(self) -> web.Response:
        return web.json_response(self.body(), status=self.status, headers=self.headers)


def middlewares(config: ServerConfig) -> list:
    """Outermost first: JSON errors, then the Host check, CORS preflight, the API key."""
    allowed_hosts = None if config.host in _WILDCARDS else _host_names(config.host)
    origins = frozenset(config.cors_origins)

    @web.middleware
    async def json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except ApiError as exc:
            return exc.response()
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            return ApiError(exc.status, exc.reason, code=_snake(exc.reason)).response()
        except Exception:
            _log.exception("The local server failed to answer %s %s", request.method, request.path)
            return ApiError(500, "The server failed to answer; see the log.").response()

    @web.middleware
    async def host_check(request: web.Request, handler: Handler) -> web.StreamResponse:
        if allowed_hosts is not None and _hostname(request.host) not in allowed_hosts:
            raise ApiError(
                403,
                f"This server answers only requests addressed to {config.host}, not to "
                f"{request.host}.",
                code="host_not_allowed",
            )
        return await handler(request)

    @web.middleware
    async def cors_preflight(request: web.Request, handler: Handler) -> web.StreamResponse:
        origin = request.headers.get("Origin")
        if request.method != "OPTIONS" or origin is None:
            return await handler(request)
        if origin not in origins:
            raise ApiError(
                403,
                f"Requests from {origin} are not allowed (add it to the server's origins).",
                code="origin_not_allowed",
            )
        return web.Response(
            status=204,
            headers={
                "Access-Control-Allow-Methods": _CORS_METHODS,
                "Access-Control-Allow-Headers": request.headers.get(
                    "Access-Control-Request-Headers", _CORS_HEADERS
                ),
                "Access-Control-Max-Age": "600",
            },
        )

    @web.middleware
    async def api_key(request: web.Request, handler: Handler) -> web.StreamResponse:
        if config.api_key and request.path != "/health":
            given = request.headers.get("Authorization", "")
            expected = f"Bearer {config.api_key}"
            if not hmac.compare_digest(given.encode(), expected.encode()):
                raise ApiError(
                    401,
                    "Incorrect or missing API key (send it as 'Authorization: Bearer KEY').",
                    code="invalid_api_key",
                )
        return await handler(request)

    return [json_errors, host_check, cors_preflight, api_key]


async def add_cors_headers(request: web.Request, response: web.StreamResponse) -> None:
    """`on_response_prepare` hook (streamed replies included): allow a listed origin only."""
    origin = request.headers.get("Origin")
    origins = request.app[CORS_ORIGINS]
    if origin is not None and origin in origins:
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Vary"] = "Origin"


CORS_ORIGINS = web.AppKey("cors_origins", frozenset)


def _host_names(host: str) -> frozenset[str]:
    names = {host.strip("[]").lower()}
    if is_loopback(host):
        names.update(_LOOPBACK_NAMES)
    return frozenset(names)


def _hostname(host_header: str | None) -> str:
    """The name in a Host header, without its port ("[::1]:1234" -> "::1")."""
    value = (host_header or "").strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _snake(reason: str) -> str:
    return reason.lower().replace(" ", "_")
