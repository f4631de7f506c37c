"""CRC-32C (Castagnoli) and TensorFlow's masked form, in pure Python.

The training image has no crc32c package and we install nothing for a check that is off by
default (DALI does not check either). Byte-wise table lookup, about 10 MB/s: fine for tests and
spot checks with `check_crc=True`, too slow to check every record of a large dataset (the packer's
`training-io verify` checks every CRC, natively).
"""
from __future__ import annotations

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
