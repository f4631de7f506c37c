"""A versioned dataset (ARCHITECTURE.md "Dataset layout", manifest version 2) made from the shards the
TypeScript engine packed in this run, for the reader's tests.

The engine packs into the layout written before versions (shards/, index/, a version 1 manifest)
until issue 16 lands; then it writes this layout itself and this helper can pack twice instead.
Here the files of one pack are arranged into two versions, as an incremental repack leaves them:

    version 1  v00000001-0a1b2c3d: shards 0, 1, 2 of the pack, in its own folder
    version 2  v00000002-4e5f6a7b: shards 0 and 2 REUSED (keys in version 1's folder), shard 1
               rewritten and shards 3, 4 new in its own folder, listed in the order 3, 0, 4, 1, 2
               (not name order, so that a reader which lists folders or sorts names reads wrongly)

and the root's manifest.json is version 2's. Version 2 holds every packed file once; a reader that
also read version 1's copy of shard 1 would read that shard's records twice.
"""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from typing import Dict, List

FIRST = "v00000001-0a1b2c3d"
SECOND = "v00000002-4e5f6a7b"
FIRST_SHARDS = (0, 1, 2)
SECOND_SHARDS = ((SECOND, 3), (FIRST, 0), (SECOND, 4), (SECOND, 1), (FIRST, 2))
"""(the folder it lies in, the packed shard's position) in version 2's order."""


@dataclass(frozen=True)
class Versioned:
    root: str
    extension: str
    """`.tfrecord` or `.rec`."""
    packed: dict
    """The packed (version 1 layout) manifest the files came from."""

    def manifest_key(self, version: str) -> str:
        return f"versions/{version}/manifest.json"

    def manifest(self, version: str) -> dict:
        with open(os.path.join(self.root, self.manifest_key(version)), encoding="utf-8") as handle:
            return json.load(handle)

    def shard_keys(self, version: str) -> List[str]:
        return [shard["key"] for shard in self.manifest(version)["shards"]]

    def index_keys(self, version: str) -> List[str]:
        return [shard["indexKey"] for shard in self.manifest(version)["shards"]]


def make_versioned(packed_dataset: str, root: str) -> Versioned:
    """Arranges the packed dataset's files under `root` as two versions; returns where they are."""
    with open(os.path.join(packed_dataset, "manifest.json"), encoding="utf-8") as handle:
        packed = json.load(handle)
    shards = packed["shards"]
    extension = os.path.splitext(shards[0]["key"])[1]
    for version, positions in ((FIRST, [(FIRST, p) for p in FIRST_SHARDS]), (SECOND, list(SECOND_SHARDS))):
        listed = []
        for folder, position in positions:
            entry = shards[position]
            name = _name(entry["key"])
            key = f"versions/{folder}/shards/{name}{extension}"
            index_key = f"versions/{folder}/index/{name}.idx"
            if folder == version:  # written by this version; a reused one is only listed
                _copy(packed_dataset, entry["key"], root, key)
                _copy(packed_dataset, entry["indexKey"], root, index_key)
            listed.append(dict(entry, key=key, indexKey=index_key, membersKey=f"versions/{folder}/members/{name}.jsonl"))
        sequence = int(version[1:9])
        manifest = {
            "version": 2,
            "datasetVersion": version,
            "sequence": sequence,
            "previousVersion": FIRST if version == SECOND else None,
            "format": packed["format"],
            "seed": packed["seed"],
            "source": packed["source"],
            "labels": packed["labels"],
            "classes": len(packed["labels"]),
            "records": sum(entry["records"] for entry in listed),
            "sizing": {"targetShardBytes": None, "shardCount": len(listed), "consumers": 1, "multipleOfConsumers": True,
                       "reusedShards": sum(1 for folder, _ in positions if folder != version)},
            "shards": listed,
            "failures": [],
        }
        if packed["format"] == "recordio":
            manifest["globalIndexKey"] = f"versions/{version}/index/all.idx"
            _write(root, manifest["globalIndexKey"], _global_recordio_index(root, listed))
        _write(root, f"versions/{version}/manifest.json", json.dumps(manifest, indent=2) + "\n")
        _write(root, f"published/{sequence:08d}.json", json.dumps({"datasetVersion": version, "publishedAt": "2026-01-01T00:00:00Z"}))
    shutil.copyfile(os.path.join(root, "versions", SECOND, "manifest.json"), os.path.join(root, "manifest.json"))
    return Versioned(root, extension, packed)


def manifest_file_channels(dataset: Versioned, version: str, data_dir: str, *, hosts: int = 1, host: int = 0,
                           shards_channel: str = "train", index_channel: str = "index") -> None:
    """What SageMaker downloads for a version's ManifestFile channels (prefix: the dataset root), as
    `data_dir/<shards_channel>` and `data_dir/<index_channel>`: with `hosts` > 1 the shards channel is
    ShardedByS3Key and host `host` gets every `hosts`-th object in key order; the index channel
    (FullyReplicated) holds every index, the global RecordIO index and the version's manifest."""
    shard_keys = sorted(dataset.shard_keys(version))[host::hosts]
    for key in shard_keys:
        _link(dataset.root, key, os.path.join(data_dir, shards_channel))
    global_index = dataset.manifest(version).get("globalIndexKey")
    for key in dataset.index_keys(version) + ([global_index] if global_index else []) + [dataset.manifest_key(version)]:
        _link(dataset.root, key, os.path.join(data_dir, index_channel))


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
    return os.path.splitext(key.rsplit("/", 1)[-1])[0]


def _copy(source_root: str, source_key: str, root: str, key: str) -> None:
    target = os.path.join(root, key)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copyfile(os.path.join(source_root, source_key), target)


def _link(root: str, key: str, channel: str) -> None:
    path = os.path.join(channel, key)
    if os.path.lexists(path):  # an index two versions share, downloaded once
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(os.path.join(root, key), path)


def _write(root: str, key: str, text: str) -> None:
    path = os.path.join(root, key)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
