"""The default upstream client: HTTP/1.1 keep-alive connections on asyncio, parsed with httptools.

Why not a general-purpose client: on this machine aiohttp spends ~120 µs of CPU per proxied request and
httpx more, while writing the request and parsing the answer with httptools (the C parser uvicorn
already uses for the gateway's own side) costs ~25 µs (bench/run.py part 0, docs/performance.md). The
gateway needs little of what those clients do: one method, no redirects, no cookies, no proxies, no
decompression, bodies relayed as bytes. What it does need is here:

* a pool of keep-alive connections per backend, bounded in total (``pool_size``); a connection goes back
  to the pool only when its answer was read to the end and the server allows keep-alive, and idle ones
  are dropped before the server's own keep-alive timeout (uvicorn's default is 5 s);
* a request that fails on a reused connection before any byte of the answer arrived is sent once more on
  a new one: the server closed the idle connection as it was being reused (the race every pooling client
  has; Go's net/http and urllib3 retry the same case);
* back-pressure: reading pauses while more than ``_HIGH_WATER`` bytes of a stream wait for the gateway;
* http and https (the backend's ``url``); the same deadlines and exceptions as every other client.

In three modules, each importing only those before it: ``connection`` (one connection as an asyncio
protocol, fed to the parser; the backend's address and the request bytes), ``response`` (one answer as
the gateway reads it: buffering, back-pressure, the end of the message) and ``pool`` (the client: the
bounded pool, idle connections, the retry). The answer reaches its client through a protocol, ``Pool``,
and the connection its answer through ``Receiver``.
"""

from gateway.upstream.httptools_client.pool import HttptoolsUpstream

__all__ = ["HttptoolsUpstream"]
