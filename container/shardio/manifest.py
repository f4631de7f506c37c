"""A dataset version's `manifest.json`, as far as a reader needs it (ARCHITECTURE.md "The manifest";
`lambda/packing/manifest.ts` is its definition): the format, the shards and their index files by
key in shard order, the global RecordIO index, the label map and class count.

Version 2 describes one version of a versioned dataset (keys in any version's folder); version 1
a dataset written before versions (keys under shards/ and index/). Both key by the dataset root.
"""
from __future__ import annotations

import base64
import binascii
import json
from collections import Counter
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Set

from .errors import FormatError
from .json_limits import loads, read_json_bytes
from .layout import KEY_SHAPE_TEXT, MANIFEST_NAME, VERSIONS_FOLDER, is_confined_key, is_layout_key, is_version_id
from .records import ShardFormat
from .samples import SampleDescription, parse_sample_description

MANIFEST_VERSIONS = (1, 2)
FORMAT_NAMES = {"tfrecord": ShardFormat.TFRECORD, "recordio": ShardFormat.RECORDIO}


@dataclass(frozen=True)
class ManifestShard:
    """One shard the manifest lists."""

    key: str
    """Relative to the dataset root; in an older version's folder when the shard was reused."""
    index_key: Optional[str]
    records: int
    bytes: Optional[int] = None
    """The shard's size; None where the manifest leaves it out."""
    members_key: Optional[str] = None
    """Its member list (`versions/<id>/members/<shard>.jsonl`: each record's input key); None in version 1."""
    crc32c: Optional[int] = None
    """CRC-32C of the whole shard (the manifest's base64 big-endian `crc32c`, as S3 reports
    ChecksumCRC32C); None where the manifest leaves it out."""
    crc32: Optional[int] = None
    """CRC-32 (zlib's, IEEE) of the whole shard, in the same form (S3's ChecksumCRC32): what a reader
    without a fast CRC-32C checks the shard with (shard_crc.py); None in manifests packed before it."""


@dataclass(frozen=True)
class DatasetManifest:
    """The reader's view of a manifest file."""

    path: str
    """The file it was read from: errors name it."""
    version: int
    """The manifest's format version: 1 (before versions) or 2."""
    dataset_version: Optional[str]
    """The version id (`v00000002-1a2b3c4d`); None in version 1."""
    format: ShardFormat
    labels: Dict[str, int]
    classes: int
    """Classes a model's output layer needs: the manifest's `classes`, else the label map's size."""
    records: int
    shards: List[ManifestShard]
    """In shard order: the order to read them in."""
    global_index_key: Optional[str]
    """RecordIO: one index over all the shards in order (DALI's mxnet reader)."""
    preprocessing: Optional[Dict[str, Any]] = None
    """What the packer did to every image (resized, re-encoded as JPEG: `shorterSide`, `longerSide`,
    `jpegQuality`, `keepGrayscale`, `sharp`, `libvips`); None when the records hold the files' own bytes."""
    sample: Optional[SampleDescription] = None
    """A multi-part dataset's samples (the manifest's `sample`: samples.py); None for a one-part dataset."""

    @property
    def largest_shard_bytes(self) -> int:
        """The size of the largest shard listed (0 when none gives one): no record is larger."""
        return max((shard.bytes or 0 for shard in self.shards), default=0)

    def listed_keys(self) -> Set[str]:
        """Every data key the manifest names: shards, indexes and the global index."""
        keys = {shard.key for shard in self.shards} | {shard.index_key for shard in self.shards if shard.index_key}
        return keys | ({self.global_index_key} if self.global_index_key else set())


def read_manifest(path: str, pinned: Optional[str] = None) -> DatasetManifest:
    """The manifest at `path`, checked: a FormatError names the file and the field that is wrong.
    `pinned`: the version pinned, which the manifest must name."""
    return parse_manifest(path, read_json_bytes(path), pinned)


def parse_manifest(path: str, data: bytes, pinned: Optional[str] = None) -> DatasetManifest:
    """The manifest in `data` (read from `path`, which errors name), checked as read_manifest does."""
    try:
        document = loads(f"dataset manifest {path}", data)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise FormatError(f"dataset manifest {path}: not JSON ({error})") from None
    if not isinstance(document, dict):
        raise FormatError(f"dataset manifest {path}: expected a JSON object, got {type(document).__name__}")
    version = document.get("version")
    if version not in MANIFEST_VERSIONS:
        raise FormatError(f"dataset manifest {path}: version {version!r} is not one this reader knows "
                          f"({', '.join(map(str, MANIFEST_VERSIONS))}); update the container's shardio")
    format_name = document.get("format")
    if format_name not in FORMAT_NAMES:
        raise FormatError(f"dataset manifest {path}: format {format_name!r} is not one of {', '.join(FORMAT_NAMES)}")
    labels = document.get("labels") or {}
    if not isinstance(labels, dict) or not all(isinstance(v, int) for v in labels.values()):
        raise FormatError(f"dataset manifest {path}: labels must map class names to integers, got {labels!r}")
    classes = document.get("classes", len(labels))
    if not isinstance(classes, int) or classes < 0:
        raise FormatError(f"dataset manifest {path}: classes must be a non-negative integer, got {classes!r}")
    shards = _shards(path, document.get("shards"))
    records = document.get("records")
    if records != sum(shard.records for shard in shards):
        raise FormatError(f"dataset manifest {path}: its shards hold {sum(shard.records for shard in shards)} records "
                          f"but it says records={records!r}")
    global_index_key = document.get("globalIndexKey")
    if global_index_key is not None:
        _check_key(path, "globalIndexKey", global_index_key, "index")
    dataset_version = document.get("datasetVersion")
    if dataset_version is not None and not is_version_id(dataset_version):
        # It names a folder of the dataset (versions/<id>/) and of the S3 reader's cache: one name, no path.
        raise FormatError(f"dataset manifest {path}: datasetVersion {dataset_version!r} is not a version id "
                          "(v<8 digits>-<8 hex digits>, such as v00000002-1a2b3c4d); refused, as it would name a path")
    if pinned is not None and dataset_version != pinned:
        # Read as the pinned version, its records would be cached and read under an id they are not.
        raise FormatError(f"dataset manifest {path}: names version {dataset_version!r}, not {pinned!r}, the version "
                          "pinned: it is not that version's manifest")
    preprocessing = document.get("preprocessing")
    if preprocessing is not None and not isinstance(preprocessing, dict):
        raise FormatError(f"dataset manifest {path}: preprocessing must be an object, got {preprocessing!r}")
    return DatasetManifest(path=path, version=version, dataset_version=dataset_version,
                           format=FORMAT_NAMES[format_name], labels=dict(labels), classes=classes, records=records,
                           shards=shards, global_index_key=global_index_key, preprocessing=preprocessing,
                           sample=parse_sample_description(path, document.get("sample")))


def pinned_version(manifest_key: str) -> Optional[str]:
    """The version a pinned manifest key names (`versions/<id>/manifest.json` → `<id>`); None for another key."""
    parts = manifest_key.split("/")
    return parts[1] if len(parts) == 3 and parts[0] == VERSIONS_FOLDER and parts[2] == MANIFEST_NAME else None


def _shards(path: str, listed: object) -> List[ManifestShard]:
    if not isinstance(listed, list):
        raise FormatError(f"dataset manifest {path}: shards must be a list, got {listed!r}")
    shards = []
    for position, shard in enumerate(listed):
        where = f"shards[{position}]"
        if not isinstance(shard, dict):
            raise FormatError(f"dataset manifest {path}: {where} must be an object, got {shard!r}")
        _check_key(path, f"{where}.key", shard.get("key"), "shard")
        index_key = shard.get("indexKey")
        if index_key is not None:
            _check_key(path, f"{where}.indexKey", index_key, "index")
        records = shard.get("records")
        if not isinstance(records, int) or records < 0:
            raise FormatError(f"dataset manifest {path}: {where}.records must be a non-negative integer, got {records!r}")
        members_key = shard.get("membersKey")
        if members_key is not None:
            _check_key(path, f"{where}.membersKey", members_key, "members")
        size = shard.get("bytes")
        if size is not None and (not isinstance(size, int) or size < 0):
            raise FormatError(f"dataset manifest {path}: {where}.bytes must be a non-negative integer, got {size!r}")
        shards.append(ManifestShard(key=shard["key"], index_key=index_key, records=records, bytes=size, members_key=members_key,
                                    crc32c=_checksum(path, f"{where}.crc32c", shard.get("crc32c"), "CRC-32C"),
                                    crc32=_checksum(path, f"{where}.crc32", shard.get("crc32"), "CRC-32")))
    repeated = sorted(key for key, count in Counter(shard.key for shard in shards).items() if count > 1)
    if repeated:
        raise FormatError(f"dataset manifest {path}: lists {', '.join(repeated)} more than once; its records would be read twice")
    return shards


def _checksum(path: str, field: str, value: object, name: str) -> Optional[int]:
    """A base64 big-endian checksum (`crc32c`, `crc32`) as an integer; None where the manifest leaves it out."""
    if value is None:
        return None
    try:
        digest = base64.b64decode(value, validate=True) if isinstance(value, str) else b""
    except binascii.Error:
        digest = b""
    if len(digest) != 4:
        raise FormatError(f"dataset manifest {path}: {field} must be the base64 of 4 bytes (a big-endian {name}), "
                          f"got {value!r}")
    return int.from_bytes(digest, "big")


def _check_key(path: str, field: str, key: object, kind: str) -> None:
    """Refuses a key before it touches a local path or an S3 key: one that leaves the dataset, then one
    of another shape than the layout's (ARCHITECTURE.md "Dataset layout")."""
    if not is_confined_key(key):
        raise FormatError(f"dataset manifest {path}: {field} {key!r} leaves the dataset root; keys are relative to it, "
                          "'/'-separated, with no empty, '.' or '..' segment")
    if not is_layout_key(key, kind):
        raise FormatError(f"dataset manifest {path}: {field} {key!r} is not a {kind} key of the dataset layout "
                          f"({KEY_SHAPE_TEXT[kind]}, each name letters, digits, '.', '_' or '-')")
