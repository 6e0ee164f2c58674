"""The message format between :func:`degrade` and its worker process (see ``_worker``)."""

from __future__ import annotations

import pickle
from typing import IO, Any

__all__ = ["read_message", "write_message"]


def write_message(stream: IO[bytes], value: Any) -> None:
    """Send one pickled value with its length in front."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(len(data).to_bytes(8, "big") + data)
    stream.flush()


def read_message(stream: IO[bytes]) -> Any:
    """Receive one value sent by :func:`write_message`; EOFError at the end of the stream."""
    head = _read_exactly(stream, 8)
    return pickle.loads(_read_exactly(stream, int.from_bytes(head, "big")))


def _read_exactly(stream: IO[bytes], n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise EOFError("the stream ended inside a message")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
