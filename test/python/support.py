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
from typing import Dict

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
    """{"source": folder, "tfrecord": dataset folder, "recordio": dataset folder, "shards": count}."""
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


needs_packed = unittest.skipUnless(_PACKED, NO_PACKED)
needs_torch = unittest.skipUnless(HAS_TORCH, NO_TORCH)
