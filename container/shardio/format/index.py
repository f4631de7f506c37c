"""The index files the packer writes next to the shards (ARCHITECTURE.md "Dataset layout").

- TFRecord (DALI tfrecord2idx): one line `"<offset> <size>"` per record, size = the framed record.
- RecordIO (MXNet `.idx`): one line `"<id>\\t<offset>"` per record, offset of its first magic word.
  DALI's mxnet reader takes ONE such file for all its `path` files, with offsets into their
  concatenation in path order: `merge_recordio_indexes` builds it for the shards a host has.
Both are parsed by whitespace, as DALI does (`fin >> a >> b`).
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

from ..errors import FormatError
from .records import ShardFormat


def parse_index(text: str, name: str) -> List[Tuple[int, int]]:
    """The (first, second) number pairs of an index file, one per line."""
    pairs = []
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        # ASCII digits only: str.isdigit also takes '²' (which int() refuses) and other scripts' digits.
        if len(fields) != 2 or not all(field.isascii() and field.isdigit() for field in fields):
            raise FormatError(f"{name}: index line {number}: expected two non-negative integers, got {line!r}")
        pairs.append((int(fields[0]), int(fields[1])))
    return pairs


def record_offsets(shard_format: ShardFormat, text: str, name: str) -> List[int]:
    """The offset of every record in its shard, in file order."""
    pairs = parse_index(text, name)
    offsets = [first for first, _ in pairs] if shard_format is ShardFormat.TFRECORD else [second for _, second in pairs]
    for position in range(1, len(offsets)):
        if offsets[position] <= offsets[position - 1]:
            raise FormatError(f"{name}: index line {position + 1}: offset {offsets[position]} does not follow {offsets[position - 1]}")
    return offsets


def merge_recordio_indexes(shards: Sequence[Tuple[str, int, str]]) -> str:
    """One MXNet index over several shards for DALI: each (index name, shard bytes, index text) in
    the order of DALI's `path` list, offsets shifted by the bytes of the shards before it."""
    lines = []
    base = 0
    for name, shard_bytes, text in shards:
        for key, offset in parse_index(text, name):
            if offset >= shard_bytes:
                raise FormatError(f"{name}: record {key} at offset {offset} lies outside its shard of {shard_bytes} bytes")
            lines.append(f"{key}\t{base + offset}\n")
        base += shard_bytes
    return "".join(lines)
