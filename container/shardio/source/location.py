"""Where a packed dataset is read from, as one string: a local folder, an S3 prefix or a SageMaker channel.

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
from typing import Optional, Union
from urllib.parse import unquote, urlparse

from .channels import open_channel
from .directory import ShardDirectory
from ..errors import printable, quoted
from .environment import INPUT_DIR
from ..catalog.layout import checked_version_id, version_manifest_key
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


def open_location(
    location: str,
    placement: Placement,
    workers: int,
    *,
    version: Optional[str] = None,
    index_channel: Optional[str] = None,
    input_dir: str = INPUT_DIR,
    s3: S3Options = S3Options(),
    check_crc: bool = True,
) -> Union[ShardDirectory, PipeSource]:
    """The record source of `location` for a process at `placement` with `workers` loader workers.
    `version` pins a dataset version by its id (`v00000002-1a2b3c4d`); the current one by default.
    `index_channel` applies to a channel; `s3` (the cache, GET limits) to an S3 prefix."""
    if version is not None:
        checked_version_id(version)
    parsed = parse_location(location)
    if parsed.kind == "s3":
        return S3ShardDirectory(parsed.bucket, parsed.prefix, version=version, options=s3, check_crc=check_crc)
    manifest = version_manifest_key(version) if version else None
    if parsed.kind == "channel":
        return open_channel(parsed.path, placement, workers, index_channel=index_channel, manifest=manifest,
                            input_dir=input_dir, check_crc=check_crc)
    if not os.path.isdir(parsed.path):
        raise FileNotFoundError(f"dataset location {quoted(location)}: no folder {parsed.path}")
    return ShardDirectory(parsed.path, manifest=manifest, check_crc=check_crc)
