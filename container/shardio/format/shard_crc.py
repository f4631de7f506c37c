"""How a shard's bytes are checked against its manifest, and the check of a whole shard.

TFRecord records carry their own CRC-32C, checked one by one as they are read (tfrecord.py) where
CRC-32C is computed natively (crc32c.py). RecordIO records carry none, so a RecordIO shard is
checked whole, against the manifest's CRC-32C, before its first record is read. Where no fast
CRC-32C is installed (a stock training image), a shard whose manifest lists its CRC-32 (packed
since #46) is checked whole against that instead, with `zlib.crc32` (GB/s, standard library),
whatever its format, and a TFRecord's own CRCs are then left alone (checked in pure Python they
would cost an epoch ~100 times what they check: docs/performance.md "Integrity checks"); only
shards of older manifests keep the pure-Python CRC-32C, about 10 MB/s.

A reader may read only part of a shard (record-level splits), so the whole shard is read once
through the checksum before the first record of it is handed out, in each reading process: a byte
changed on a disk or in a channel is refused before any record of that shard reaches training,
naming the shard. A shard fetched from S3 is checked the same way as it comes (s3_dataset.py).

A Pipe-mode stream (SageMaker concatenates the shards in an order of its own) is checked by its
host, each shard found in it by its size and CRC-32: pipe_check.py. DALI's readers read the files
natively (dali.py checks each shard whole first).
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import BinaryIO, Callable, Optional

from .crc32c import NATIVE, Buffer, crc32c, warn_if_slow
from ..errors import FormatError
from .records import ShardFormat

_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Checksum:
    """A checksum of a whole shard, and the value its manifest lists."""

    name: str
    """`CRC-32C` or `CRC-32`, as errors name it."""
    update: Callable[[Buffer, int], int]
    """The checksum of the bytes, continuing from that of the bytes before them."""
    expected: int


def shard_checksum(crc32c_listed: Optional[int], crc32_listed: Optional[int]) -> Optional[Checksum]:
    """What a shard is checked against, whole: its CRC-32C where computed natively or where the
    manifest lists no CRC-32 (in pure Python then), else its CRC-32; None where it lists neither."""
    if crc32c_listed is not None and (NATIVE or crc32_listed is None):
        return Checksum("CRC-32C", crc32c, crc32c_listed)
    if crc32_listed is not None:
        return Checksum("CRC-32", zlib.crc32, crc32_listed)
    return None


@dataclass(frozen=True)
class ShardCheck:
    """How one shard is checked as it is read (check_crc): `whole` before its first record (None:
    not whole), and whether each record's own CRCs are (a TFRecord's)."""

    whole: Optional[Checksum]
    records: bool


UNCHECKED = ShardCheck(None, False)


def shard_check(shard_format: ShardFormat, crc32c_listed: Optional[int], crc32_listed: Optional[int]) -> ShardCheck:
    """How a shard of `shard_format` whose manifest lists these checksums is checked (module doc);
    warns once where that is in pure Python."""
    whole = shard_checksum(crc32c_listed, crc32_listed)
    if shard_format is ShardFormat.TFRECORD and (whole is None or whole.name == "CRC-32C"):
        warn_if_slow()
        return ShardCheck(None, True)
    if whole is not None and whole.name == "CRC-32C":
        warn_if_slow()
    return ShardCheck(whole, False)


def check_shard_crc(handle: BinaryIO, name: str, checksum: Optional[Checksum], listed_in: str) -> None:
    """Reads `handle` from its start through `checksum` and refuses it where that differs from what
    `listed_in` lists (None: nothing to check); leaves the handle at its start."""
    if checksum is None:
        return
    handle.seek(0)
    crc, size = 0, 0
    chunk = handle.read(_CHUNK)
    while chunk:
        crc = checksum.update(chunk, crc)
        size += len(chunk)
        chunk = handle.read(_CHUNK)
    handle.seek(0)
    if crc != checksum.expected:
        raise FormatError(f"{name}: its {size} bytes have {checksum.name} {crc:#010x} but {listed_in} lists {checksum.expected:#010x}: "
                          "the shard changed after packing (it is checked whole before its first record is read); "
                          "check_crc=False (train.py --check_crc false) reads it anyway")
