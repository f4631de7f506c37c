"""Where a packed dataset is read from, as one string: a local folder, an S3 prefix or a SageMaker channel;
and `Source`, that string with which version to read and how.

- a folder: a path (`/data/flowers`, `data/flowers`) or a `file://` URL (`file:///data/flowers`):
  the dataset root a pack wrote (its `manifest.json`), or a bare folder of shards;
- an S3 prefix: `s3://bucket/prefix/`, the dataset root, streamed through a local cache (s3_dataset.py);
- a SageMaker channel: `sagemaker://<channel>` (`sagemaker://train`), whatever its input mode, as
  `channel_data_loader` reads it (channels.py).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Optional, Union
from urllib.parse import unquote, urlparse

from .channels import open_channel
from .directory import ShardDirectory
from ..errors import printable, quoted
from .environment import INPUT_DIR
from ..catalog.layout import checked_version_id, version_manifest_key
from ..catalog.manifest import pinned_version
from ..pipe_mode.pipe import PipeSource
from .s3_dataset import S3Options, S3ShardDirectory
from ..epoch.split import Placement

CHANNEL_SCHEME = "sagemaker"
_FORMS = "a folder (a path or file:// URL), s3://bucket/prefix/ or sagemaker://<channel>"


@dataclass(frozen=True)
class Location:
    """A parsed location: `kind` is "folder" (`path`), "s3" (`bucket`, `prefix`) or "channel" (`path` is its name)."""

    kind: str
    path: str = ""
    bucket: str = ""
    prefix: str = ""


def parse_location(location: str) -> Location:
    """The location a string names, or a ValueError naming it and the forms allowed."""
    if not isinstance(location, str) or not location:
        raise ValueError(f"dataset location {location!r}: expected {_FORMS}")
    if "://" not in location:
        return Location("folder", path=location)
    scheme, _, rest = location.partition("://")
    if "@" in re.split(r"[/?#]", rest, maxsplit=1)[0]:
        # Not a character of it echoed: what comes before '@' is a user name and password as often as not.
        raise ValueError(f"dataset location: a {printable(scheme[:20])}:// URL with a user name or password before '@' "
                         "(not shown): S3 credentials come from the environment (AWS_PROFILE, AWS_ACCESS_KEY_ID, an "
                         "instance or execution role), never from the location")
    url = urlparse(location)
    if url.scheme == "file":
        if url.netloc not in ("", "localhost") or not url.path:
            raise ValueError(f"dataset location {quoted(location)}: a file:// URL names a local path (file:///data/flowers), "
                             f"not host {quoted(url.netloc)}")
        return Location("folder", path=unquote(url.path))
    if url.scheme == "s3":
        if not url.netloc or url.query or url.fragment:
            raise ValueError(f"dataset location {quoted(location)}: expected s3://bucket/prefix/ (a bucket, then the dataset "
                             "root's prefix; no query or fragment)")
        return Location("s3", bucket=url.netloc, prefix=url.path.lstrip("/"))
    if url.scheme == CHANNEL_SCHEME:
        name = url.netloc
        if not name or url.path.strip("/") or url.query:
            raise ValueError(f"dataset location {quoted(location)}: expected {CHANNEL_SCHEME}://<channel>, e.g. "
                             f"{CHANNEL_SCHEME}://train")
        return Location("channel", path=name)
    raise ValueError(f"dataset location {quoted(location)}: scheme {url.scheme}:// is not one of file://, s3://, "
                     f"{CHANNEL_SCHEME}://; expected {_FORMS}")


@dataclass(frozen=True)
class Source:
    """A packed dataset to read.

    - `location`: a folder (a path or `file://` URL), `s3://bucket/prefix/` (streamed through a local
      cache) or `sagemaker://<channel>`, whatever the channel's input mode.
    - `version`: the dataset version to read, by its id (`v00000002-1a2b3c4d`); the current one by default.
    - `manifest`: the version instead as its manifest's key under the dataset root, as the pipeline
      passes it (`versions/<id>/manifest.json`); with a channel, any key of the channel's.
    - `index_channel`: with a channel, the channel holding its index files (and manifest), if any.
    - `s3`: how an S3 prefix is read: its cache, GET timeouts and retries, shards fetched ahead (S3Options).
    - `check_crc`: every record's CRC checked as it is read (a RecordIO shard's whole, before its first record); False opts out.
    - `input_dir`: SageMaker's input folder (its channels and hyperparameters), /opt/ml/input.
    """

    location: str
    version: Optional[str] = None
    manifest: Optional[str] = None
    index_channel: Optional[str] = None
    s3: S3Options = S3Options()
    check_crc: bool = True
    input_dir: str = INPUT_DIR

    def __post_init__(self) -> None:
        parsed = parse_location(self.location)
        if self.version is not None:
            checked_version_id(self.version)
            if self.manifest is not None:
                raise ValueError(f"Source {quoted(self.location)}: version {self.version} and manifest {quoted(self.manifest)} "
                                 "both pin a version; give one")
        if self.manifest is not None and parsed.kind != "channel":
            # A folder or an S3 prefix is pinned by version id: the manifest's key must name one.
            version = pinned_version(self.manifest) if isinstance(self.manifest, str) else None
            if version is None:
                raise ValueError(f"Source {quoted(self.location)}: manifest {self.manifest!r} must be a version's manifest key "
                                 "(versions/<version>/manifest.json) outside a channel")
            object.__setattr__(self, "version", checked_version_id(version))
            object.__setattr__(self, "manifest", None)
        if self.index_channel is not None and parsed.kind != "channel":
            raise ValueError(f"Source {quoted(self.location)}: index_channel {self.index_channel!r} applies to a "
                             "sagemaker://<channel> location only (a folder or S3 prefix holds its own index/)")
        if not isinstance(self.s3, S3Options):
            raise TypeError(f"Source {quoted(self.location)}: s3 must be an S3Options, got {type(self.s3).__name__}")
        if not isinstance(self.check_crc, bool):
            raise TypeError(f"Source {quoted(self.location)}: check_crc must be True or False, got {self.check_crc!r}")

    def open(self, placement: Placement, workers: int) -> Union[ShardDirectory, PipeSource]:
        """The record source for a process at `placement` whose DataLoader runs `workers` worker
        processes (0: none). A channel in Pipe mode starts its fan-out here (channels.py): open it in
        every process before its DataLoader starts."""
        parsed = parse_location(self.location)
        if parsed.kind == "s3":
            return S3ShardDirectory(parsed.bucket, parsed.prefix, version=self.version, options=self.s3,
                                    check_crc=self.check_crc)
        manifest = self.manifest or (version_manifest_key(self.version) if self.version else None)
        if parsed.kind == "channel":
            return open_channel(parsed.path, placement, workers, index_channel=self.index_channel, manifest=manifest,
                                input_dir=self.input_dir, check_crc=self.check_crc)
        if not os.path.isdir(parsed.path):
            raise FileNotFoundError(f"dataset location {quoted(self.location)}: no folder {parsed.path}")
        return ShardDirectory(parsed.path, manifest=manifest, check_crc=self.check_crc)


def open_location(location: str, placement: Placement, workers: int, **source: Any) -> Union[ShardDirectory, PipeSource]:
    """The record source of `location` for a process at `placement` with `workers` loader workers:
    `Source(location, **source).open(placement, workers)` (Source has the fields: version, s3, ...)."""
    return Source(location, **source).open(placement, workers)
