"""A Discord REST stand-in on 127.0.0.1: the few routes a reply uses, answered as Discord answers them, including
its rate limits.

The bot's own `discord.py` HTTP client talks to it (`Route.BASE` pointed here, `static_login` against it), so the
429 handling under test is the library's, fed with Discord's headers: `X-RateLimit-Limit/-Remaining/-Reset/
-Reset-After/-Bucket/-Scope`, `X-RateLimit-Global` and `Retry-After` on a global limit, `Via` (discord.py treats a
429 without it as a Cloudflare ban), and the JSON body `{"message", "retry_after", "global", "code"}`.

`limit(method, path=, times=, retry_after=, scope=)` makes the next `times` such requests answer 429.
`messages(channel_id)` is what a user of the channel sees: each message once, in order, with its latest content.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import web

from tests.helpers import BOT_ID
from tests.support.local_http import serving

Scope = Literal["user", "shared", "global"]
_ids = itertools.count(1_300_000_000_000_000_000)


@dataclass
class _Limit:
    method: str
    path: str
    times: int
    retry_after: float
    scope: Scope


@dataclass
class Seen:
    method: str
    path: str
    status: int
    at: float


@dataclass
class DiscordRest:
    base: str = ""
    seen: list[Seen] = field(default_factory=list)
    _limits: list[_Limit] = field(default_factory=list)
    _messages: dict[int, dict[int, dict[str, Any]]] = field(default_factory=dict)  # channel -> id -> message

    def limit(
        self, method: str, *, path: str = "/messages", times: int = 1, retry_after: float = 0.3, scope: Scope = "user"
    ) -> None:
        """The next `times` requests with `method` whose path holds `path` answer 429."""
        self._limits.append(_Limit(method, path, times, retry_after, scope))

    def messages(self, channel_id: int) -> list[str]:
        return [message["content"] for message in self._messages.get(channel_id, {}).values()]

    def statuses(self, method: str) -> list[int]:
        return [seen.status for seen in self.seen if seen.method == method and "/messages" in seen.path]

    # --- the routes ----------------------------------------------------------------------------------------

    def _limited(self, request: web.Request) -> web.Response | None:
        for limit in self._limits:
            if limit.method == request.method and limit.path in request.path and limit.times > 0:
                limit.times -= 1
                return _too_many(limit)
        return None

    async def _handle(self, request: web.Request) -> web.Response:
        limited = self._limited(request)  # not `or`: a StreamResponse is falsy on some aiohttp versions (no items)
        response = limited if limited is not None else await self._answer(request)
        self.seen.append(Seen(request.method, request.path, response.status, time.monotonic()))
        return response

    async def _answer(self, request: web.Request) -> web.Response:
        path = request.path.removeprefix("/api/v10")
        parts = path.strip("/").split("/")
        if path == "/users/@me":
            return _ok({"id": str(BOT_ID), "username": "MemoryBot", "discriminator": "0", "avatar": None, "bot": True})
        if len(parts) >= 3 and parts[0] == "channels" and parts[2] == "typing":
            return web.Response(status=204, headers=_bucket_headers("typing"))
        if len(parts) == 3 and parts[0] == "channels" and parts[2] == "messages":
            if request.method == "GET":
                return _ok([])
            return _ok(self._create(int(parts[1]), await request.json()))
        if len(parts) == 4 and parts[0] == "channels" and parts[2] == "messages":
            channel, message_id = int(parts[1]), int(parts[3])
            if request.method == "DELETE":
                self._messages.get(channel, {}).pop(message_id, None)
                return web.Response(status=204, headers=_bucket_headers("delete"))
            if request.method == "PATCH":
                return _ok(self._edit(channel, message_id, await request.json()))
            return _ok(self._messages[channel][message_id])
        return web.json_response({"message": "404: Not Found", "code": 0}, status=404)

    def _create(self, channel_id: int, body: dict[str, Any]) -> dict[str, Any]:
        message = bot_message(channel_id, next(_ids), body.get("content") or "")
        self._messages.setdefault(channel_id, {})[int(message["id"])] = message
        return message

    def _edit(self, channel_id: int, message_id: int, body: dict[str, Any]) -> dict[str, Any]:
        message = self._messages[channel_id][message_id]
        if "content" in body:
            message["content"] = body["content"] or ""
        return message


def bot_message(channel_id: int, message_id: int, content: str) -> dict[str, Any]:
    return {
        "id": str(message_id), "channel_id": str(channel_id), "type": 0, "content": content,
        "author": {"id": str(BOT_ID), "username": "MemoryBot", "discriminator": "0", "avatar": None, "bot": True},
        "timestamp": "2026-01-01T00:00:00+00:00", "edited_timestamp": None, "tts": False, "mention_everyone": False,
        "mentions": [], "mention_roles": [], "attachments": [], "embeds": [], "pinned": False, "flags": 0,
    }


def user_message(channel_id: int, user_id: int, name: str, content: str) -> dict[str, Any]:
    """A MESSAGE_CREATE payload of a user's DM, as the gateway sends it."""
    message = bot_message(channel_id, next(_ids), content)
    message["author"] = {"id": str(user_id), "username": name, "discriminator": "0", "avatar": None}
    return message


def _bucket_headers(bucket: str, remaining: int = 4) -> dict[str, str]:
    return {
        "X-RateLimit-Limit": "5", "X-RateLimit-Remaining": str(remaining),
        "X-RateLimit-Reset": f"{time.time() + 1:.3f}", "X-RateLimit-Reset-After": "1.000",
        "X-RateLimit-Bucket": f"bucket-{bucket}",
    }


def _ok(payload: Any) -> web.Response:
    body = json.dumps(payload).encode()  # exactly "application/json": discord.py parses nothing else
    return web.Response(body=body, content_type="application/json", headers=_bucket_headers("ok"))


def _too_many(limit: _Limit) -> web.Response:
    body = {"message": "You are being rate limited.", "retry_after": limit.retry_after,
            "global": limit.scope == "global", "code": 0}
    headers = {"Via": "1.1 google", "Retry-After": str(max(1, round(limit.retry_after)))}
    if limit.scope == "global":
        headers["X-RateLimit-Global"] = "true"
        headers["X-RateLimit-Scope"] = "global"
    else:
        headers.update(_bucket_headers("messages", remaining=0))
        headers["X-RateLimit-Scope"] = limit.scope
    return web.Response(body=json.dumps(body).encode(), status=429, content_type="application/json", headers=headers)


@asynccontextmanager
async def discord_rest() -> AsyncIterator[DiscordRest]:
    """Serve the stand-in on a free port of 127.0.0.1 for the block."""
    rest = DiscordRest()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", rest._handle)
    async with serving(app) as port:
        rest.base = f"http://127.0.0.1:{port}/api/v10"
        yield rest
