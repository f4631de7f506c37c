"""A RecordIO shard's CRC-32C, checked whole before its first record is read.

RecordIO records carry no CRC (TFRecord's do, and are checked one by one as they are read:
tfrecord.py), so what can be checked is the shard's own CRC-32C from the manifest. A reader may
read only part of a shard (record-level splits), so the whole shard is read once through the CRC
before the first record of it is handed out, in each reading process: a byte changed on a disk or
in a channel is refused before any record of that shard reaches training, naming the shard. A
shard fetched from S3 was checked the same way as it came (s3_dataset.py).

A Pipe-mode stream (SageMaker concatenates the shards in an order of its own) is checked by the
host, each shard found by its size and zlib CRC-32: pipe_check.py. Not covered: DALI's readers (they
read the files natively).
"""
from __future__ import annotations

from typing import BinaryIO, Optional

from .crc32c import crc32c
from .errors import FormatError

_CHUNK = 1024 * 1024


def check_shard_crc(handle: BinaryIO, name: str, expected: Optional[int], listed_in: str) -> None:
    """Reads `handle` from its start through CRC-32C and refuses it where that differs from `expected`
    (the manifest `listed_in` lists; None: nothing to check); leaves the handle at its start."""
    if expected is None:
        return
    handle.seek(0)
    crc, size = 0, 0
    chunk = handle.read(_CHUNK)
    while chunk:
        crc = crc32c(chunk, crc)
        size += len(chunk)
        chunk = handle.read(_CHUNK)
    handle.seek(0)
    if crc != expected:
        raise FormatError(f"{name}: its {size} bytes have CRC-32C {crc:#010x} but {listed_in} lists {expected:#010x}: the "
                          "shard changed after packing (RecordIO records carry no CRC, so the whole shard is checked before "
                          "its first record is read); check_crc=False (train.py --check_crc false) reads it anyway")
