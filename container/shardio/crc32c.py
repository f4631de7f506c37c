"""CRC-32C (Castagnoli) and TensorFlow's masked form.

Natively where the `crc32c` package is installed (Debian's python3-crc32c, PyPI's crc32c: some
GB/s, what checking every record as it is read needs: check_crc, on by default), else in pure
Python: byte-wise table lookup, about 10 MB/s, correct but slow; a training image should have the
package (SageMaker's PyTorch images can `pip install crc32c`), or read with `check_crc=False`.
"""
from __future__ import annotations

import logging

try:
    from crc32c import crc32c as _native_crc32c  # python3-crc32c; absolute import, not this module
except ImportError:  # pragma: no cover - depends on the machine
    _native_crc32c = None

NATIVE = _native_crc32c is not None
_LOG = logging.getLogger("shardio.crc32c")
_warned = [False]


def warn_if_slow() -> None:
    """Logs once per process that CRCs are checked in pure Python (about 10 MB/s per process) where the
    `crc32c` package is missing: a reader that checks them (check_crc, the default) says so rather
    than slowing an epoch without a word."""
    if NATIVE or _warned[0]:
        return
    _warned[0] = True
    _LOG.warning("the crc32c package is not installed: record CRCs are checked in pure Python, about 10 MB/s per "
                 "process; `pip install crc32c` (Debian: python3-crc32c) checks them natively, or check_crc=False "
                 "(train.py --check_crc false) leaves them unchecked")


_POLYNOMIAL = 0x82F63B78  # reflected 0x1EDC6F41
_MASK_DELTA = 0xA282EAD8


def _table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLYNOMIAL if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_TABLE = _table()


def crc32c(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """CRC-32C of `data`, continuing from `crc` (the value of the bytes before it)."""
    if _native_crc32c is not None:
        # Any buffer as it is (the package takes bytes-like objects): a record's payload is a view of its block.
        return int(_native_crc32c(data, crc))
    return pure_crc32c(data, crc)


def pure_crc32c(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """`crc32c` in pure Python: where the `crc32c` package is not installed."""
    table = _TABLE
    crc ^= 0xFFFFFFFF
    for byte in bytes(data):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def mask(crc: int) -> int:
    """TensorFlow's record CRC: rotate right by 15 bits and add a constant (crc32c.h Mask)."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def unmask(masked: int) -> int:
    """The CRC a masked value was made from (crc32c.h Unmask)."""
    rotated = (masked - _MASK_DELTA) & 0xFFFFFFFF
    return ((rotated >> 17) | (rotated << 15)) & 0xFFFFFFFF


def masked_crc32c(data: bytes | bytearray | memoryview) -> int:
    """What a TFRecord stores after its length and after its data."""
    return mask(crc32c(data))
