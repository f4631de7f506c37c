"""The keys of a packed dataset, relative to its root (ARCHITECTURE.md "Dataset layout").

`lambda/packing/dataset-layout.ts` is the definition, in the TypeScript engine that writes them;
this is the reader's copy. A dataset is a series of immutable versions:

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

MANIFEST_NAME = "manifest.json"
"""At the root: the current version's manifest; in a version's folder: that version's own."""
VERSIONS_FOLDER = "versions"
PUBLISHED_FOLDER = "published"
SHARDS_FOLDER = "shards"
"""In a version's folder, or at the root of a dataset written before versions."""
INDEX_FOLDER = "index"
MEMBERS_FOLDER = "members"
INDEX_EXTENSION = ".idx"
VERSION_ID = re.compile(r"^v\d{8}-[0-9a-f]{8}$")
"""`v<sequence, 8 digits>-<8 random hex digits>`."""


def version_manifest_key(version_id: str) -> str:
    """`versions/<id>/manifest.json`: the key that pins a version (--dataset_manifest)."""
    return f"{VERSIONS_FOLDER}/{version_id}/{MANIFEST_NAME}"


def checked_version_id(version: object) -> str:
    """`version` where it is a version id, else a ValueError saying what one looks like."""
    if not isinstance(version, str) or not VERSION_ID.match(version):
        raise ValueError(f"dataset version {version!r}: must be a version id such as v00000002-1a2b3c4d "
                         "(a manifest's datasetVersion)")
    return version


def is_confined_key(key: object) -> bool:
    """Whether a manifest key stays inside the dataset: relative, `/`-separated, with no empty, `.`
    or `..` segment (the rule of `isConfinedKey` in dataset-layout.ts)."""
    if not isinstance(key, str) or not key or key.startswith("/") or "\\" in key:
        return False
    return all(segment not in ("", ".", "..") for segment in key.split("/"))
