"""Versioned datasets (ARCHITECTURE.md "Dataset layout", manifest version 2) made from the datasets the
TypeScript engine packed in this run, for the reader's tests.

The engine's pack is version 1 of a versioned dataset, as the engine wrote it; `make_versioned`
copies it and adds version 2 as an incremental repack leaves it (the engine's repack lists its
reused shards first and its new ones after, in name order, which would not show a reader that
sorts names; this one does not):

    version 1  `Versioned.first` (the engine's id): the pack's 5 shards, in its own folder
    version 2  v00000002-4e5f6a7b: shards 0 and 2 REUSED (keys in version 1's folder, listed by
               reference), shards 1, 3, 4 rewritten into its own folder, listed in the order
               3, 0, 4, 1, 2 (not name order, so that a reader which lists folders or sorts names
               reads wrongly)

and the root's manifest.json is version 2's. Both versions hold every packed file once; a reader
that also read version 1's copy of shard 1 would read that shard's records twice.

`before_versions` writes the layout of datasets packed before versions (shards/, index/, a
version 1 manifest at the root) from the engine's pack, which no longer writes it.
"""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from typing import Dict, List

from support import dataset_manifest, manifest_file_channels as _channels

SECOND = "v00000002-4e5f6a7b"
REUSED, REWRITTEN = "reused", "rewritten"
SECOND_SHARDS = ((REWRITTEN, 3), (REUSED, 0), (REWRITTEN, 4), (REWRITTEN, 1), (REUSED, 2))
"""(how version 2 has it, the packed shard's position) in version 2's order."""


@dataclass(frozen=True)
class Versioned:
    root: str
    extension: str
    """`.tfrecord` or `.rec`."""
    first: str
    """Version 1's id: the engine chose it (its random part differs in every run)."""
    packed: dict
    """Version 1's manifest, as the engine wrote it."""

    def manifest_key(self, version: str) -> str:
        return f"versions/{version}/manifest.json"

    def manifest(self, version: str) -> dict:
        return dataset_manifest(self.root, self.manifest_key(version))

    def shard_keys(self, version: str) -> List[str]:
        return [shard["key"] for shard in self.manifest(version)["shards"]]

    def index_keys(self, version: str) -> List[str]:
        return [shard["indexKey"] for shard in self.manifest(version)["shards"]]

    def positions(self, version: str) -> List[int]:
        """The packed shards a version lists, in its order."""
        return [position for _how, position in SECOND_SHARDS] if version == SECOND else list(range(len(self.packed["shards"])))


def make_versioned(packed_dataset: str, root: str) -> Versioned:
    """The engine's pack copied to `root` as version 1, and version 2 derived from it; returns where they are."""
    shutil.copytree(packed_dataset, root)
    packed = dataset_manifest(root)
    first = packed["datasetVersion"]
    # Version 2 is drawn from the first 5 shards; reader_safety_s3's pack has 6 (its blip cuts half of them).
    assert (packed["version"], packed["sequence"]) == (2, 1) and len(packed["shards"]) >= 5, "the engine's pack is version 1 of 5 shards or more"
    listed = []
    for how, position in SECOND_SHARDS:
        entry = packed["shards"][position]
        if how == REUSED:  # listed by reference: the key in version 1's folder
            listed.append(entry)
            continue
        moved = {field: entry[field].replace(f"versions/{first}/", f"versions/{SECOND}/", 1) for field in ("key", "indexKey", "membersKey")}
        for field, key in moved.items():
            _copy(root, entry[field], key)
        listed.append(dict(entry, **moved))
    manifest = dict(packed, datasetVersion=SECOND, sequence=2, previousVersion=first, shards=listed,
                    records=sum(entry["records"] for entry in listed),
                    sizing=dict(packed["sizing"], reusedShards=sum(1 for how, _ in SECOND_SHARDS if how == REUSED)))
    if packed["format"] == "recordio":
        manifest["globalIndexKey"] = f"versions/{SECOND}/index/all.idx"
        _write(root, manifest["globalIndexKey"], _global_recordio_index(root, listed))
    _write(root, f"versions/{SECOND}/manifest.json", json.dumps(manifest, indent=2) + "\n")
    _write(root, "published/00000002.json", json.dumps({"datasetVersion": SECOND, "publishedAt": "2026-01-01T00:00:00Z"}))
    shutil.copyfile(os.path.join(root, "versions", SECOND, "manifest.json"), os.path.join(root, "manifest.json"))
    return Versioned(root, os.path.splitext(packed["shards"][0]["key"])[1], first, packed)


def before_versions(packed_dataset: str, root: str) -> dict:
    """The engine's pack as a dataset packed before versions wrote it (lambda/packing/manifest.ts
    before issue 16): `shards/<name>`, `index/<name>.idx`, RecordIO's `index/all.idx` and a version 1
    manifest at `root` (no datasetVersion, sequence, classes, sizing or membersKey). Returns the manifest."""
    packed = dataset_manifest(packed_dataset)
    shards = []
    for entry in packed["shards"]:
        key, index_key = f"shards/{_name(entry['key'])}", f"index/{_name(entry['indexKey'])}"
        _copy(packed_dataset, entry["key"], key, root)
        _copy(packed_dataset, entry["indexKey"], index_key, root)
        shards.append({"key": key, "indexKey": index_key, **{field: entry[field] for field in
                                                            ("records", "bytes", "crc32c", "firstRecordId", "lastRecordId")}})
    manifest = {field: packed[field] for field in ("format", "seed", "source", "labels", "records")}
    manifest = {"version": 1, **manifest, "shards": shards}
    if "globalIndexKey" in packed:
        manifest["globalIndexKey"] = "index/all.idx"
        _copy(packed_dataset, packed["globalIndexKey"], "index/all.idx", root)
    manifest["failures"] = packed["failures"]
    write_manifest(root, "manifest.json", manifest)
    return manifest


def manifest_file_channels(dataset: Versioned, version: str, data_dir: str, **options) -> List[str]:
    """A version's ManifestFile channels (support.manifest_file_channels)."""
    return _channels(dataset.root, data_dir, version_manifest=dataset.manifest_key(version), **options)


def write_manifest(root: str, key: str, manifest: dict) -> str:
    _write(root, key, json.dumps(manifest, indent=2) + "\n")
    return os.path.join(root, key)


def _global_recordio_index(root: str, listed: List[Dict[str, object]]) -> str:
    """index/all.idx: each shard's `id\\toffset` lines with offsets shifted by the bytes of the shards
    before it in the manifest's order (what the engine writes for DALI's mxnet reader)."""
    lines, base = [], 0
    for entry in listed:
        with open(os.path.join(root, str(entry["indexKey"])), encoding="ascii") as handle:
            for line in handle.read().splitlines():
                record_id, offset = line.split("\t")
                lines.append(f"{record_id}\t{base + int(offset)}\n")
        base += os.path.getsize(os.path.join(root, str(entry["key"])))
    return "".join(lines)


def _name(key: str) -> str:
    return key.rsplit("/", 1)[-1]


def _copy(source_root: str, source_key: str, key: str, root: str = "") -> None:
    """`source_root/source_key` to `root/key` (`root` defaults to `source_root`)."""
    target = os.path.join(root or source_root, key)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copyfile(os.path.join(source_root, source_key), target)


def _write(root: str, key: str, text: str) -> None:
    path = os.path.join(root, key)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
