"""Shared by the Python tests of container/: where the real files and the packed shards are.

`npm test` runs these tests from test/container/container-python.test.ts, which first packs a
folder of real JPEGs with the TypeScript engine (both formats) and passes the description in
SHARDIO_TEST_PACKED. Run alone, the tests that need those shards are skipped and say so.
"""
from __future__ import annotations

import importlib.util
import json
import os
import unittest
from typing import Dict, List, Optional

# Real files written by TensorFlow and dmlc-core, the ones the TypeScript format tests read
# (sources and licenses: test/fixtures/README.md).
EXTERNAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "formats")

HAS_TORCH = importlib.util.find_spec("torch") is not None
NO_TORCH = "PyTorch is not installed for this Python (CI has none): the PyTorch dataset, DataLoader, transforms and train.py are not run"

_PACKED = os.environ.get("SHARDIO_TEST_PACKED")
NO_PACKED = "SHARDIO_TEST_PACKED is not set: run through `npx jest test/container`, which packs the shards first"


def external(name: str) -> bytes:
    with open(os.path.join(EXTERNAL, name), "rb") as handle:
        return handle.read()


def packed() -> Dict[str, object]:
    """{"source": folder, "tfrecord": dataset root, "recordio": dataset root, "shards": count, "files": count}.

    Each dataset root is what the engine writes (ARCHITECTURE.md "Dataset layout"): one version,
    `versions/<id>/{shards,index,members}/`, its manifest there and a copy at the root."""
    with open(_PACKED, encoding="utf-8") as handle:  # type: ignore[arg-type]
        return json.load(handle)


def source_files(source: str) -> Dict[str, bytes]:
    """Every file under the packed source folder by its `/`-separated key."""
    files = {}
    for root, _dirs, names in os.walk(source):
        for name in names:
            path = os.path.join(root, name)
            key = os.path.relpath(path, source).replace(os.sep, "/")
            with open(path, "rb") as handle:
                files[key] = handle.read()
    return files


def dataset_manifest(root: str, key: str = "manifest.json") -> dict:
    """The manifest at `key` under a dataset root (the root's is the current version's)."""
    with open(os.path.join(root, key), encoding="utf-8") as handle:
        return json.load(handle)


def manifest_file_channels(root: str, data_dir: str, *, version_manifest: Optional[str] = None, hosts: int = 1, host: int = 0,
                           shards_channel: str = "train", index_channel: str = "index") -> List[str]:
    """What SageMaker downloads for a version's ManifestFile channels, as `data_dir/<shards_channel>`
    and `data_dir/<index_channel>`; returns the shard keys this host got.

    The engine's finalizer writes them (S3 only): `shards.manifest` lists the version's shards,
    `index.manifest` its manifest, every index and the global RecordIO index, both with the dataset
    root as prefix, so SageMaker puts the object `<key>` at `<channel>/<key>`. With `hosts` > 1 the
    shards channel is ShardedByS3Key and host `host` gets every `hosts`-th object in key order; the
    index channel is FullyReplicated. `version_manifest` is the version's manifest key; by default
    the current version's (the one the root's manifest names)."""
    if version_manifest is None:
        version_manifest = f"versions/{dataset_manifest(root)['datasetVersion']}/manifest.json"
    manifest = dataset_manifest(root, version_manifest)
    shard_keys = sorted(shard["key"] for shard in manifest["shards"])[host::hosts]
    for key in shard_keys:
        _link(root, key, os.path.join(data_dir, shards_channel))
    global_index = [manifest["globalIndexKey"]] if manifest.get("globalIndexKey") else []
    for key in [version_manifest] + [shard["indexKey"] for shard in manifest["shards"]] + global_index:
        _link(root, key, os.path.join(data_dir, index_channel))
    return shard_keys


def _link(root: str, key: str, channel: str) -> None:
    path = os.path.join(channel, key)
    if os.path.lexists(path):  # an index two versions share, downloaded once
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(os.path.join(root, key), path)


needs_packed = unittest.skipUnless(_PACKED, NO_PACKED)
needs_torch = unittest.skipUnless(HAS_TORCH, NO_TORCH)


FAST_CRC32C_MODULES = ("crc32c", "google_crc32c", "awscrt")
"""The fast CRC-32C implementations shardio.format.crc32c looks for, in its order."""


class _Hidden:
    """A meta path finder that makes importing some top-level modules fail, as where they are not installed."""

    def __init__(self, names) -> None:
        self.names = set(names)

    def find_spec(self, name: str, path=None, target=None):
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r} (hidden by the test)", name=name)
        return None


def hide_modules(names=FAST_CRC32C_MODULES) -> None:
    """Makes `names` unimportable in this process: call before shardio is first imported (it looks for
    a fast CRC-32C once), as on a stock training image without the crc32c package."""
    import sys

    if any(name in sys.modules for name in ("shardio", *names)):
        raise RuntimeError(f"hide_modules({list(names)}) comes too late: shardio or one of them is already imported")
    sys.meta_path.insert(0, _Hidden(names))
