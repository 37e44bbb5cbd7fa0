"""A zero-delay fake of the OpenAI API, as fast as this machine allows: the upstream for overhead runs.

    python3 bench/fake_upstream.py --port 9000

POST /v1/chat/completions answers a fixed completion, or, with "stream": true, 256 content chunks, a
usage chunk and [DONE]. GET /health answers 200. Any model is accepted.
"""

from __future__ import annotations

import argparse

import orjson
import uvicorn

CHUNKS = 256

_COMPLETION = orjson.dumps(
    {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hello there! " * 8},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 24, "total_tokens": 34},
    }
)
_CHUNK = (
    b'data: {"id":"chatcmpl-fake","object":"chat.completion.chunk","created":0,"model":"fake",'
    b'"choices":[{"index":0,"delta":{"content":" token"},"finish_reason":null}]}\n\n'
)
_TAIL = (
    b'data: {"id":"chatcmpl-fake","object":"chat.completion.chunk","created":0,"model":"fake",'
    b'"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b'data: {"id":"chatcmpl-fake","object":"chat.completion.chunk","created":0,"model":"fake","choices":[],'
    b'"usage":{"prompt_tokens":10,"completion_tokens":256,"total_tokens":266}}\n\n'
    b"data: [DONE]\n\n"
)


async def app(scope, receive, send):  # type: ignore[no-untyped-def]
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    if scope["path"] == "/health":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})
        return
    if b'"stream":true' in body or b'"stream": true' in body:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        for _ in range(CHUNKS):
            await send({"type": "http.response.body", "body": _CHUNK, "more_body": True})
        await send({"type": "http.response.body", "body": _TAIL, "more_body": False})
        return
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(_COMPLETION)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": _COMPLETION})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=args.port,
        loop="uvloop",
        http="httptools",
        access_log=False,
        log_level="warning",
        lifespan="on",
    )


if __name__ == "__main__":
    main()
