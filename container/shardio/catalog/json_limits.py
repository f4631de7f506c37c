"""JSON from outside (a manifest) parsed within limits: its size is checked before it
is read and its nesting before it is parsed, so that a huge document is not parsed whole (about 5
times its size in memory) and a deep one ends in an error naming the file rather than a bare
RecursionError. The limits are lib/contract/json-limits.ts's, generated into contract.py."""
from __future__ import annotations

import json
import os
import re
import stat
from itertools import accumulate
from typing import Any

from ..contract import MAX_JSON_BYTES, MAX_JSON_DEPTH
from ..errors import FormatError

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = bytes(byte for byte in range(256) if byte not in b"[]{}")
_STEP = bytes.maketrans(b"[]{}", b"\x01\xff\x01\xff")
"""An opening bracket is +1, a closing one -1 (0xff as a signed byte)."""


class JsonLimitError(FormatError):
    """A JSON document refused before it was parsed: too large, too deep, or not a regular file."""


def json_depth(data: bytes) -> int:
    """The deepest nesting of arrays and objects in a JSON text (brackets inside strings do not count).
    Strings out, then every byte but a bracket, then a running sum: each step in C, about twice as
    fast as a Python loop over the brackets and strings (1.1-1.9 times json.loads' time, 4 MB)."""
    steps = _STRING.sub(b"", data).translate(None, _NOT_BRACKET).translate(_STEP)
    return max(accumulate(memoryview(steps).cast("b")), default=0)


def check_json(name: str, data: bytes) -> None:
    """Raises a JsonLimitError naming `name` when `data` is over the size or the depth limit."""
    if len(data) > MAX_JSON_BYTES:
        raise _too_large(name, len(data))
    if json_depth(data) > MAX_JSON_DEPTH:
        raise JsonLimitError(f"{name}: JSON nested more than {MAX_JSON_DEPTH} levels deep; refused (the documents "
                             "the engine writes nest 4 deep)")


def read_json_bytes(path: str) -> bytes:
    """The bytes of a JSON file, only when it is a regular file within the size limit, checked before a
    byte is read (opened without blocking: a FIFO would wait for a writer, /dev/zero never end)."""
    with os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb", buffering=0) as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise JsonLimitError(f"{path}: not a regular file; only a file is read as JSON")
        if info.st_size > MAX_JSON_BYTES:
            raise _too_large(path, info.st_size)
        return handle.read(MAX_JSON_BYTES + 1)


def loads(name: str, data: bytes) -> Any:
    """`data` parsed as JSON, after check_json; a JsonLimitError or json.JSONDecodeError otherwise."""
    check_json(name, data)
    return json.loads(data)


def _too_large(name: str, size: int) -> JsonLimitError:
    return JsonLimitError(f"{name}: {size / 2 ** 20:.1f} MiB of JSON is more than the {MAX_JSON_BYTES // 2 ** 20} MiB "
                          "allowed; refused without parsing it")
