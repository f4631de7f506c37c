"""CRC-32C (Castagnoli) and TensorFlow's masked form.

Natively where the `crc32c` package is installed (Debian's python3-crc32c, PyPI's crc32c: some
hundreds of MB/s, what checking every shard streamed from S3 needs), else in pure Python: byte-wise
table lookup, about 10 MB/s, fine for tests and spot checks with `check_crc=True`. The training
image need not have the package: records' CRCs are off by default (DALI does not check either).
"""
from __future__ import annotations

try:
    from crc32c import crc32c as _native_crc32c  # python3-crc32c; absolute import, not this module
except ImportError:  # pragma: no cover - depends on the machine
    _native_crc32c = None

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
        return int(_native_crc32c(bytes(data) if not isinstance(data, bytes) else data, crc))
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
