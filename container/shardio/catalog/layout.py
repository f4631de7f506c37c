"""The keys of a packed dataset, relative to its root (ARCHITECTURE.md "Dataset layout").

`lambda/packing/dataset-layout.ts` is the definition, in the TypeScript engine that writes them; the
names and the version id's shape come from its contract, generated into contract.py. A dataset is a
series of immutable versions:

    manifest.json                              the current version's manifest (a copy)
    published/00000002.json                    the claim that made version 2 current
    versions/v00000002-1a2b3c4d/manifest.json  the version's own manifest, never changed
    versions/<id>/shards/part-00000-of-00128.tfrecord (.rec), index/part-….idx, index/all.idx,
    members/part-….jsonl

A version's manifest lists its shards by key, in shard order; a reused shard's key lies in an older
version's folder. Datasets written before versions have shards/, index/ and a version 1 manifest at
the root, keyed the same way (relative to the root), so one reader serves both.
"""
from __future__ import annotations

import re

from ..contract import DATASET_LAYOUT, VERSION_ID_PATTERN

MANIFEST_NAME = DATASET_LAYOUT["manifest"]
"""At the root: the current version's manifest; in a version's folder: that version's own."""
VERSIONS_FOLDER = DATASET_LAYOUT["versions"].rstrip("/")
PUBLISHED_FOLDER = DATASET_LAYOUT["published"].rstrip("/")
SHARDS_FOLDER = DATASET_LAYOUT["shardsFolder"].rstrip("/")
"""In a version's folder, or at the root of a dataset written before versions."""
INDEX_FOLDER = DATASET_LAYOUT["indexFolder"].rstrip("/")
MEMBERS_FOLDER = DATASET_LAYOUT["membersFolder"].rstrip("/")
INDEX_EXTENSION = ".idx"
VERSION_ID = re.compile(VERSION_ID_PATTERN, re.ASCII)
"""`v<sequence, 8 digits>-<8 random hex digits>`, ASCII digits only (contract.VERSION_ID_PATTERN)."""
_NAME = r"[A-Za-z0-9_][A-Za-z0-9._-]*"
"""One file name as the packer writes them (`part-00007-of-00128`, `all`): no separator, no `.` or
`..` (it starts with a letter, digit or `_`), no space or control character."""
_VERSION_FOLDER = rf"(?:{VERSIONS_FOLDER}/{VERSION_ID.pattern}/)?"
KEY_SHAPES = {
    "shard": re.compile(rf"{_VERSION_FOLDER}{SHARDS_FOLDER}/{_NAME}\.(?:tfrecord|rec)"),
    "index": re.compile(rf"{_VERSION_FOLDER}{INDEX_FOLDER}/{_NAME}{re.escape(INDEX_EXTENSION)}"),
    "members": re.compile(rf"{VERSIONS_FOLDER}/{VERSION_ID.pattern}/{MEMBERS_FOLDER}/{_NAME}\.jsonl"),
}
"""The keys a manifest lists, by kind, relative to the dataset root (whole-string patterns: use
`fullmatch`): in a version's folder, or (a dataset written before versions) in shards/ and index/."""
KEY_SHAPE_TEXT = {
    "shard": "[versions/<version id>/]shards/<name>.tfrecord or .rec",
    "index": "[versions/<version id>/]index/<name>.idx",
    "members": "versions/<version id>/members/<name>.jsonl",
}


def version_manifest_key(version_id: str) -> str:
    """`versions/<id>/manifest.json`: the key that pins a version (--dataset_manifest)."""
    return f"{VERSIONS_FOLDER}/{version_id}/{MANIFEST_NAME}"


def is_version_id(version: object) -> bool:
    """Whether `version` is a version id: the one name a manifest's datasetVersion may be."""
    return isinstance(version, str) and VERSION_ID.fullmatch(version) is not None


def checked_version_id(version: object) -> str:
    """`version` where it is a version id, else a ValueError saying what one looks like."""
    if not is_version_id(version):
        raise ValueError(f"dataset version {version!r}: must be a version id such as v00000002-1a2b3c4d "
                         "(a manifest's datasetVersion)")
    return version


def is_layout_key(key: object, kind: str) -> bool:
    """Whether a manifest key of `kind` ("shard", "index", "members") has the layout's shape (KEY_SHAPES):
    every name one safe file name (_NAME), so it stays inside the dataset whatever joins it to a folder or prefix."""
    return isinstance(key, str) and KEY_SHAPES[kind].fullmatch(key) is not None


def is_confined_key(key: object) -> bool:
    """Whether a manifest key stays inside the dataset: relative, `/`-separated, with no empty, `.`
    or `..` segment (the rule of `isConfinedKey` in dataset-layout.ts)."""
    if not isinstance(key, str) or not key or key.startswith("/") or "\\" in key:
        return False
    return all(segment not in ("", ".", "..") for segment in key.split("/"))
