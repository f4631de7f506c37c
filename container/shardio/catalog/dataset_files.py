"""Which shard and index files a reader opens, in which order: from the dataset's manifest where
there is one, else from a bare directory of shards.

The channel shapes (ARCHITECTURE.md "Dataset layout", "Readers"):
- the dataset ROOT (a FastFile or FSx channel, or a File channel of the whole prefix): the root's
  `manifest.json` names the current version, or the job is given a version's own manifest
  (`versions/<id>/manifest.json`, pinned so that it never switches mid-run). Shards lie at
  `<root>/<key>`, keys possibly in several version folders (reused shards);
- a File channel made from a version's SageMaker ManifestFile: the shards channel holds
  `versions/<id>/shards/…` (with ShardedByS3Key only this host's), the FullyReplicated index channel
  `versions/<id>/index/…` and the version's `manifest.json`;
- no manifest: a dataset written before versions without one, or a bare directory of shards (the
  shards/ prefix as a channel): the shards in name order, their indexes by name.
Keys are relative to the dataset root, so a channel mounts the root (or a ManifestFile prefixed by
it) and `<channel>/<key>` is the file.
"""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from typing import List, Optional, Sequence

from ..errors import FormatError
from .layout import INDEX_EXTENSION, INDEX_FOLDER, MANIFEST_NAME, MEMBERS_FOLDER, SHARDS_FOLDER, VERSIONS_FOLDER, is_confined_key
from .manifest import DatasetManifest, pinned_version, read_manifest
from ..format.records import ShardFormat, format_of_path

PINNED_MANIFEST_ENV = "SHARDIO_DATASET_MANIFEST"
"""The version manifest a job reads (a key under the dataset root), when the pipeline pins one."""


@dataclass(frozen=True)
class Shard:
    """One shard file and, when present, its index file."""

    path: str
    size: int
    index_path: Optional[str]
    records: Optional[int] = None
    """Its record count, from the manifest; None without one."""
    key: Optional[str] = None
    """Its key under the dataset root (a bare directory's: under the channel), for errors to name."""
    members_path: Optional[str] = None
    """Its member list (each record's input key), where the channel holds it; None otherwise."""


@dataclass(frozen=True)
class DatasetFiles:
    """What a reader opens: the format, the shards in read order, and where they were found."""

    format: ShardFormat
    shards: List[Shard]
    manifest: Optional[DatasetManifest]
    global_index_path: Optional[str]
    """RecordIO: the version's index over all its shards, when every one of them is here."""


def open_dataset(
    path: str,
    index_dir: Optional[str] = None,
    *,
    manifest: Optional[str] = None,
    host_sharded: bool = False,
) -> DatasetFiles:
    """The shards of the channel at `path` (index files in `index_dir`, else by their keys under
    `path`), driven by the dataset manifest: `manifest` (a key such as
    `versions/v00000002-1a2b3c4d/manifest.json`, pinned) or the one found. With `host_sharded`
    (ShardedByS3Key) the channel may hold only some of the manifest's shards."""
    manifest_path = find_manifest([path, index_dir], manifest)
    if manifest_path is None:
        return _bare_directory(path, index_dir)
    listed = read_manifest(manifest_path, pinned_version(manifest) if manifest else None)
    if not manifest_path.startswith(os.path.join(path, "")):  # found in the index channel
        _refuse_unlisted(path, listed)
    shards, missing = [], []
    for shard in listed.shards:
        shard_path = os.path.join(path, shard.key)
        if not os.path.isfile(shard_path):
            missing.append(shard.key)
            continue
        index_path = _listed_file(shard.index_key, [index_dir, path], listed, f"the index of shard {shard.key}")
        shards.append(Shard(shard_path, os.path.getsize(shard_path), index_path, shard.records, key=shard.key,
                            members_path=_present(path, shard.members_key)))
    if missing and not host_sharded:
        raise FileNotFoundError(f"{path}: lacks {len(missing)} of the {len(listed.shards)} shards that {manifest_path} "
                                f"lists, first {missing[0]}; mount the dataset root (or the version's ManifestFile)")
    if not shards:
        raise FileNotFoundError(f"{path}: none of the {len(listed.shards)} shards {manifest_path} lists (a ShardedByS3Key "
                                "host with no shard gets an empty channel: use at least as many shards as instances)")
    global_index = None
    if listed.global_index_key and not missing:
        global_index = _listed_file(listed.global_index_key, [index_dir, path], listed, "the global index")
    return DatasetFiles(listed.format, shards, listed, global_index)


def find_manifest(folders: Sequence[Optional[str]], pinned: Optional[str] = None) -> Optional[str]:
    """The manifest to read among `folders` (a channel, its index channel): `pinned` where given;
    else a `manifest.json` at a folder's root (the current version); else the one version manifest
    `versions/<id>/manifest.json` they hold (a ManifestFile channel); None when there is none."""
    present = [folder for folder in folders if folder and os.path.isdir(folder)]
    if pinned:
        if not is_confined_key(pinned):
            raise ValueError(f"dataset manifest {pinned!r} ({PINNED_MANIFEST_ENV} or --dataset_manifest): must be a key "
                             "relative to the dataset root such as versions/v00000002-1a2b3c4d/manifest.json")
        for folder in present:
            if os.path.isfile(os.path.join(folder, pinned)):
                return os.path.join(folder, pinned)
        raise FileNotFoundError(f"dataset manifest {pinned} ({PINNED_MANIFEST_ENV} or --dataset_manifest) is in none of "
                                f"{', '.join(present) or 'the channels (none exists)'}")
    for folder in present:
        if os.path.isfile(os.path.join(folder, MANIFEST_NAME)):
            return os.path.join(folder, MANIFEST_NAME)
    found = sorted({path for folder in present for path in glob.glob(os.path.join(glob.escape(folder), VERSIONS_FOLDER, "*", MANIFEST_NAME))})
    if len(found) > 1:
        raise FileNotFoundError(f"{len(found)} version manifests and no {MANIFEST_NAME} at the root: {', '.join(found)}; "
                                f"pin one with {PINNED_MANIFEST_ENV} or --dataset_manifest")
    return found[0] if found else None


def _listed_file(key: Optional[str], folders: Sequence[Optional[str]], listed: DatasetManifest, what: str) -> Optional[str]:
    if key is None:
        return None
    for folder in folders:
        if folder and os.path.isfile(os.path.join(folder, key)):
            return os.path.join(folder, key)
    raise FileNotFoundError(f"{key}: {what}, listed in {listed.path}, is in none of "
                            f"{', '.join(folder for folder in folders if folder)}; pass the index channel")


def _present(root: str, key: Optional[str]) -> Optional[str]:
    """`<root>/<key>` where that file exists: a ManifestFile channel holds the shards and not their member lists."""
    return os.path.join(root, key) if key and os.path.isfile(os.path.join(root, key)) else None


def _refuse_unlisted(path: str, listed: DatasetManifest) -> None:
    """A channel read through a manifest found elsewhere must hold only what it lists: a file it does
    not list means the channel and the manifest are of different versions, and would be skipped."""
    keys = listed.listed_keys()
    for folder, _dirs, names in os.walk(path, followlinks=True):
        for name in sorted(names):
            key = os.path.relpath(os.path.join(folder, name), path).replace(os.sep, "/")
            if key not in keys:
                raise FormatError(f"{path}: holds {key}, which {listed.path} does not list: the channel and the manifest "
                                  "are of different dataset versions")


def no_published_version(where: str) -> str:
    """What a reader says of a folder or prefix with no manifest at its root: no version was published."""
    return (f"{where}: no published version: there is no {MANIFEST_NAME} at its root. A pack that failed before it "
            f"published leaves only {VERSIONS_FOLDER}/<id>/ folders, never read; pack the dataset (again), or point "
            "the reader at the root of a dataset a pack published")


def _bare_directory(path: str, index_dir: Optional[str]) -> DatasetFiles:
    versions = os.path.join(path, VERSIONS_FOLDER)
    if os.path.isdir(versions):
        # A version's index/ or members/ beside its shards: a pack's unpublished folder, not a ManifestFile channel (shards only).
        if any(os.path.isdir(os.path.join(versions, version, folder)) for version in os.listdir(versions)
               for folder in (INDEX_FOLDER, MEMBERS_FOLDER)):
            raise FileNotFoundError(no_published_version(path))
        raise FileNotFoundError(f"{path}: holds {VERSIONS_FOLDER}/ of a versioned dataset but no manifest; pass the index "
                                f"channel (it holds {VERSIONS_FOLDER}/<id>/{MANIFEST_NAME}) or mount the dataset root")
    shard_dir = os.path.join(path, SHARDS_FOLDER) if os.path.isdir(os.path.join(path, SHARDS_FOLDER)) else path
    if not os.path.isdir(shard_dir):
        raise FileNotFoundError(f"shard directory {shard_dir} does not exist")
    names = sorted(name for name in os.listdir(shard_dir) if format_of_path(name))
    formats = {format_of_path(name) for name in names}
    if len(formats) > 1:
        raise FormatError(f"{shard_dir}: holds both TFRecord and RecordIO shards; keep one dataset per channel")
    if not names:
        raise FileNotFoundError(_no_shards(shard_dir))
    index_dir = index_dir or _default_index_dir(path, shard_dir)
    shards = [Shard(os.path.join(shard_dir, name), os.path.getsize(os.path.join(shard_dir, name)), _index_path(index_dir, name),
                    key=os.path.relpath(os.path.join(shard_dir, name), path).replace(os.sep, "/"))
              for name in names]
    return DatasetFiles(formats.pop(), shards, None, None)  # type: ignore[arg-type]


IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".webp", ".gif", ".tif", ".tiff", ".bmp")
"""What `training-io pack` reads: a folder of them is a dataset to pack, not a packed one."""
_LOOKED_AT = 1000
"""Entries looked at for an image before saying what the folder is: a large folder is not walked whole."""


def _no_shards(shard_dir: str) -> str:
    """Why a folder without shards cannot be read, by what it holds: nothing (a ShardedByS3Key host
    without a shard of its own), images not yet packed, or other files."""
    entries = sorted(os.listdir(shard_dir))
    if not entries:
        return (f"{shard_dir}: empty, no .tfrecord or .rec shards (a ShardedByS3Key host with no shard gets an empty channel: "
                "use at least as many shards as instances)")
    image = _an_image(shard_dir)
    if image is not None:
        return (f"{shard_dir}: holds images ({image}), not packed shards: pack the folder first "
                f"(npx training-io pack {shard_dir} <output>) and read <output>")
    return (f"{shard_dir}: no .tfrecord or .rec shards among its {len(entries)} entries (such as {entries[0]}); a dataset "
            f"that training-io pack wrote has {MANIFEST_NAME} and {VERSIONS_FOLDER}/ at its root")


def _an_image(folder: str) -> Optional[str]:
    """The relative path of an image file under `folder`, among the first entries walked; None without one."""
    seen = 0
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            if name.lower().endswith(IMAGE_EXTENSIONS):
                return os.path.relpath(os.path.join(root, name), folder).replace(os.sep, "/")
            seen += 1
        seen += len(dirs)
        if seen >= _LOOKED_AT:
            return None
    return None


def _default_index_dir(path: str, shard_dir: str) -> Optional[str]:
    candidate = os.path.join(path if shard_dir != path else os.path.dirname(os.path.abspath(path)), INDEX_FOLDER)
    return candidate if os.path.isdir(candidate) else None


def _index_path(index_dir: Optional[str], shard_name: str) -> Optional[str]:
    if index_dir is None:
        return None
    path = os.path.join(index_dir, os.path.splitext(shard_name)[0] + INDEX_EXTENSION)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: the index of shard {shard_name} is missing from {index_dir}")
    return path
