"""A minimal FastAPI proxy, one upstream client at a time: the floor any Python gateway stands on.

    python3 bench/minimal_proxy.py --client aiohttp --port 9100 --upstream http://127.0.0.1:9000

It forwards ``POST /v1/chat/completions`` (body and content type, nothing else) to the upstream and
relays the answer, with one shared client per process. bench/run.py runs it with each client to choose the
gateway's upstream client by the numbers: ``httpx`` (plain), ``httpx-aiohttp`` (httpx's API over
aiohttp's transport), ``aiohttp``, and ``httptools``, the gateway's own client (gateway/upstream/
httptools_client/). Served as the issue measured it: one uvicorn worker, uvloop and httptools (the
gateway itself now runs on asyncio's loop by default: part 0b).
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import Response

CLIENTS = ("httpx", "httpx-aiohttp", "aiohttp", "httptools")

Forward = Callable[[bytes], Awaitable[tuple[int, bytes]]]


@asynccontextmanager
async def _client(name: str, url: str) -> AsyncIterator[Forward]:
    target = url + "/v1/chat/completions"
    headers = {"content-type": "application/json"}
    if name == "httptools":
        from gateway.upstream.httptools_client import HttptoolsUpstream
        from gateway.upstream.settings import BackendSettings

        backend = BackendSettings(name="fake", kind="autoregressive", url=url, model="fake")
        client = HttptoolsUpstream([], limit=256)

        async def send(body: bytes) -> tuple[int, bytes]:
            response = await client.send(
                backend, "/v1/chat/completions", body=body, headers=list(headers.items()), stream=False
            )
            try:
                return response.status, await response.read()
            finally:
                await response.aclose()

        yield send
        await client.aclose()
        return
    if name == "aiohttp":
        import aiohttp

        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=256)) as session:

            async def forward(body: bytes) -> tuple[int, bytes]:
                async with session.post(target, data=body, headers=headers) as r:
                    return r.status, await r.read()

            yield forward
        return
    import httpx

    limits = httpx.Limits(max_connections=256, max_keepalive_connections=256)
    if name == "httpx-aiohttp":
        from httpx_aiohttp import AiohttpTransport

        client = httpx.AsyncClient(transport=AiohttpTransport(), limits=limits)
    else:
        client = httpx.AsyncClient(limits=limits)
    async with client:

        async def forward(body: bytes) -> tuple[int, bytes]:
            r = await client.post(target, content=body, headers=headers)
            return r.status_code, r.content

        yield forward


def build(name: str, upstream: str) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with _client(name, upstream) as forward:
            app.state.forward = forward
            yield

    app = FastAPI(lifespan=lifespan)

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        status, body = await request.app.state.forward(await request.body())
        return Response(body, status_code=status, media_type="application/json")

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--client", choices=CLIENTS, required=True)
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    uvicorn.run(
        build(args.client, args.upstream),
        host=args.host,
        port=args.port,
        loop="uvloop",
        http="httptools",
        access_log=False,
        log_level="warning",
    )


if __name__ == "__main__":
    main()
