"""Reading a request body within limits: at most ``max_bytes`` (checked against ``Content-Length`` before reading
and again while the body streams in, so an oversized body costs at most the limit in memory) and within
``seconds`` (a client that declares more than it sends, or sends it a byte at a time, gets 408 and its connection
closed; the server goes on serving everyone else meanwhile)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request

CLOSE = {"Connection": "close"}
"""Sent with a refusal while a body may still be on its way: the connection ends with the response."""


@dataclass(frozen=True)
class BodyLimits:
    max_bytes: int = 1 << 20
    """A label is a few hundred bytes; 1 MiB leaves room for a long text label."""
    seconds: float = 10.0
    """The whole body must arrive within this time from the moment the app starts reading it."""


async def read_body(request: Request, limits: BodyLimits) -> bytes:
    """The request body, or an HTTPException: 400 (a Content-Length that is not a number), 413 (more than
    ``limits.max_bytes``, declared or sent), 408 (not all there within ``limits.seconds``)."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.strip().isdigit():
            raise HTTPException(400, f"Content-Length {declared[:40]!r} is not a number of bytes", headers=CLOSE)
        if int(declared) > limits.max_bytes:
            raise HTTPException(413, f"the request body ({int(declared)} bytes) is over the limit of "
                                     f"{limits.max_bytes} bytes", headers=CLOSE)
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(limits.seconds):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limits.max_bytes:
                    raise HTTPException(413, f"the request body is over the limit of {limits.max_bytes} bytes",
                                        headers=CLOSE)
                chunks.append(chunk)
    except TimeoutError:
        raise HTTPException(408, f"the request body did not arrive within {limits.seconds:g} s "
                                 f"({size} bytes came)", headers=CLOSE) from None
    except ClientDisconnect:
        raise HTTPException(400, "the client went away before sending its whole body", headers=CLOSE) from None
    return b"".join(chunks)
