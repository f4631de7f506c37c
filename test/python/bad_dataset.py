"""A small versioned dataset written here in Python, with undecodable files packed as records, for the
tests of the readers' bad-record policy (the TypeScript packer now refuses such files, and the
readers must still name them in datasets packed before it did).

The layout and files are the engine's (ARCHITECTURE.md "Dataset layout", "Record formats"): a
version's shards (tf.train.Example or im2rec records), their index files, member lists
(`[key, size, label, recordId, modified]` per line) and manifest, with a copy at the root.
"""
from __future__ import annotations

import io
import json
import os
import struct
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from PIL import Image

from shardio import IR_HEADER, RECORDIO_MAGIC, masked_crc32c

VERSION = "v00000001-0badc0de"
NOT_AN_IMAGE = b"this is a text file, not an image\n"
BROKEN_JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF"
"""The 10-byte `broken.jpg` of issue #32: a JPEG's first bytes and nothing after them."""


@dataclass(frozen=True)
class Packed:
    root: str
    shard_keys: List[str]
    records: List[Tuple[str, int, int]]
    """(input key, shard position, index in the shard) of every record, in shard order."""

    def where(self, key: str) -> Tuple[str, int]:
        """(shard key, index in the shard) of the record of input `key`."""
        for record_key, shard, position in self.records:
            if record_key == key:
                return self.shard_keys[shard], position
        raise KeyError(key)


def jpeg(index: int) -> bytes:
    """A small real JPEG, a different colour per index."""
    output = io.BytesIO()
    Image.new("RGB", (40 + index % 7, 30 + index % 5), ((index * 37) % 256, (index * 91) % 256, (index * 53) % 256)).save(
        output, format="JPEG")
    return output.getvalue()


def inputs(count: int, bad: Dict[int, Tuple[str, bytes]]) -> List[Tuple[str, bytes, int]]:
    """`count` (key, bytes, label) inputs over two classes: real JPEGs, but `bad[i]` = (key, bytes) at i."""
    files = []
    for index in range(count):
        key, data = bad.get(index, (f"{('cat', 'dog')[index % 2]}/{index}.jpg", jpeg(index)))
        files.append((key, data, index % 2))
    return files


def write_dataset(root: str, files: Sequence[Tuple[str, Any, int]], *, shards: int = 4, extension: str = ".tfrecord",
                  sample: Optional[dict] = None) -> Packed:
    """`files` packed in order into `shards` shards of near-equal counts, record ids from 0. A file whose
    bytes are a dict (part name → bytes) is a multi-part sample (`sample_example`); `sample` is then the
    manifest's `sample` field (lib/contract/sample-parts.ts `SampleDescription`)."""
    version_dir = f"versions/{VERSION}"
    listed, records, shard_keys = [], [], []
    for shard in range(shards):
        name = f"part-{shard:05d}-of-{shards:05d}"
        keys = {"key": f"{version_dir}/shards/{name}{extension}", "indexKey": f"{version_dir}/index/{name}.idx",
                "membersKey": f"{version_dir}/members/{name}.jsonl"}
        first, last = len(files) * shard // shards, len(files) * (shard + 1) // shards
        shard_bytes, index_lines, member_lines = b"", [], []
        for position, record_id in enumerate(range(first, last)):
            key, data, label = files[record_id]
            framed = _tfrecord(key, data, label) if extension == ".tfrecord" else _recordio(record_id, data, label)
            index_lines.append(f"{len(shard_bytes)} {len(framed)}\n" if extension == ".tfrecord" else f"{record_id}\t{len(shard_bytes)}\n")
            size = sum(map(len, data.values())) if isinstance(data, dict) else len(data)
            member_lines.append(json.dumps([key, size, label, record_id, 0]) + "\n")
            shard_bytes += framed
            records.append((key, shard, position))
        _write(root, keys["key"], shard_bytes)
        _write(root, keys["indexKey"], "".join(index_lines).encode())
        _write(root, keys["membersKey"], "".join(member_lines).encode())
        listed.append({**keys, "records": last - first, "bytes": len(shard_bytes)})
        shard_keys.append(keys["key"])
    manifest = json.dumps({"version": 2, "datasetVersion": VERSION, "sequence": 1,
                           "format": "tfrecord" if extension == ".tfrecord" else "recordio", "labels": {"cat": 0, "dog": 1},
                           "classes": 2, "records": len(files), "shards": listed, **({"sample": sample} if sample else {})}).encode()
    _write(root, f"{version_dir}/manifest.json", manifest)
    _write(root, "manifest.json", manifest)
    return Packed(root, shard_keys, records)


def _write(root: str, key: str, data: bytes) -> None:
    path = os.path.join(root, key)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)


def _tfrecord(key: str, data: Any, label: int) -> bytes:
    if isinstance(data, dict):
        example = sample_example(key, data, label)
    else:
        example = _field(1, b"".join(_field(1, _field(1, name.encode()) + _field(2, feature)) for name, feature in (
            ("image/encoded", _field(1, _field(1, data))),
            ("image/class/label", _field(3, _field(1, _varint(label)))),
            ("image/filename", _field(1, _field(1, key.encode()))),
        )))
    length = struct.pack("<Q", len(example))
    return length + struct.pack("<I", masked_crc32c(length)) + example + struct.pack("<I", masked_crc32c(example))


def sample_example(key: str, parts: Dict[str, bytes], label: int, image_part: Optional[str] = "jpg") -> bytes:
    """The tf.train.Example of the multi-part sample `key` (lib/contract/sample-parts.ts): `image_part` in
    image/encoded, image/format and image/filename, the label, every other part as a bytes feature named by
    the part, the key in sample/key."""
    features = [("image/class/label", _field(3, _field(1, _varint(label)))), ("sample/key", _bytes_feature(key.encode()))]
    for part, data in parts.items():
        if part == image_part:
            features += [("image/encoded", _bytes_feature(data)), ("image/format", _bytes_feature(b"jpeg")),
                         ("image/filename", _bytes_feature(f"{key}.{part}".encode()))]
        else:
            features.append((part, _bytes_feature(data)))
    return _field(1, b"".join(_field(1, _field(1, name.encode()) + _field(2, feature)) for name, feature in sorted(features)))


def _bytes_feature(data: bytes) -> bytes:
    return _field(1, _field(1, data))


def _recordio(record_id: int, data: bytes, label: int) -> bytes:
    payload = IR_HEADER.pack(0, float(label), record_id, 0) + data
    magic = struct.pack("<I", RECORDIO_MAGIC)
    assert all(payload[i:i + 4] != magic for i in range(0, len(payload), 4)), "a payload the writer would split"
    return struct.pack("<II", RECORDIO_MAGIC, len(payload)) + payload + b"\0" * (-len(payload) % 4)


def _field(number: int, value: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def _varint(number: int) -> bytes:
    out = bytearray()
    while True:
        byte, number = number & 0x7F, number >> 7
        out.append(byte | (0x80 if number else 0))
        if not number:
            return bytes(out)
