"""A SageMaker channel as a record source, whatever its input mode."""
from __future__ import annotations

import os
import tempfile
from typing import Optional, Union

from ..catalog.dataset_files import find_manifest
from .directory import ShardDirectory
from .environment import INPUT_DIR, input_channels
from ..errors import FormatError
from ..catalog.manifest import DatasetManifest, pinned_version, read_manifest
from ..format.records import record_limit
from ..pipe_mode.pipe import DEFAULT_PIPE_TIMEOUT, PipeFanOut, PipeSource, whole_stream
from ..pipe_mode.pipe_check import whole_shard_sums
from ..epoch.split import Placement


def open_channel(
    channel: str,
    placement: Placement,
    workers: int,
    *,
    index_channel: Optional[str] = None,
    manifest: Optional[str] = None,
    input_dir: str = INPUT_DIR,
    check_crc: bool = True,
    pipe_timeout: float = DEFAULT_PIPE_TIMEOUT,
) -> Union[ShardDirectory, PipeSource]:
    """The records of `channel` for a process at `placement` whose DataLoader runs `workers` worker
    processes (0 without): a shard directory in File/FastFile/file-system mode, a FIFO per epoch in
    Pipe mode. `index_channel` is the channel holding the index files (index/ prefix, or a version's
    index ManifestFile with its manifest.json), if any; `manifest` pins the dataset version to read
    (its manifest's key under the dataset root, as the pipeline passes it; see dataset_files.py).

    In Pipe mode with more than one consumer, local rank 0 starts the fan-out thread here: call this
    in every process before its DataLoader starts. The manifest, found in the index channel, gives
    the record count each epoch's stream is checked against, where each host streams every object.
    """
    channels = input_channels(input_dir)
    if channel not in channels:
        raise KeyError(f"channel {channel!r}: not one of this job's channels ({', '.join(sorted(channels)) or 'none'}, "
                       f"from {os.path.join(input_dir, 'config', 'inputdataconfig.json')})")
    config = channels[channel]
    data_dir = os.path.join(input_dir, "data")
    if config.input_mode != "Pipe":
        index_dir = os.path.join(data_dir, index_channel) if index_channel else None
        return ShardDirectory(os.path.join(data_dir, channel), index_dir, manifest=manifest, host_sharded=config.host_sharded,
                              check_crc=check_crc)

    if config.record_wrapper not in (None, "None"):
        raise FormatError(f"channel {channel}: RecordWrapperType {config.record_wrapper} wraps every shard in one more "
                          "RecordIO record; use RecordWrapperType None for channels of packed shards")
    host_count = placement.host_count
    if not config.host_sharded and config.shuffled and host_count > 1:
        raise ValueError(f"channel {channel}: a FullyReplicated Pipe channel with a ShuffleConfig may stream a different "
                         "order to each host, so hosts cannot split it by record number; use ShardedByS3Key")
    local_consumers = placement.local_world_size * max(1, workers)
    group_count = 1 if config.host_sharded else host_count
    fanout_dir = os.path.join(tempfile.gettempdir(), "shardio-pipes", channel)
    listed = channel_manifest(channel, index_channel=index_channel, manifest=manifest, input_dir=input_dir)
    if local_consumers * group_count > 1 and placement.local_rank == 0:
        PipeFanOut(data_dir, channel, fanout_dir, local_consumers, group_index=0 if config.host_sharded else placement.host_index,
                   group_count=group_count, timeout=pipe_timeout,
                   listed=listed if whole_stream(config.host_sharded, host_count) else None,
                   max_record=record_limit(listed.largest_shard_bytes if listed is not None else 0),
                   sums=whole_shard_sums(listed, check_crc)).start()
    return PipeSource(data_dir, channel, local_consumers=local_consumers, host_sharded=config.host_sharded,
                      host_count=host_count, fanout_dir=fanout_dir, timeout=pipe_timeout, check_crc=check_crc, manifest=listed)


def channel_manifest(
    channel: str,
    *,
    index_channel: Optional[str] = None,
    manifest: Optional[str] = None,
    input_dir: str = INPUT_DIR,
) -> Optional[DatasetManifest]:
    """The manifest of the dataset a channel reads, found as `open_channel` finds it (also for a Pipe
    channel, whose manifest can only be in its index channel); None when there is none."""
    data_dir = os.path.join(input_dir, "data")
    folders = [os.path.join(data_dir, name) for name in (channel, index_channel) if name]
    path = find_manifest(folders, manifest)
    return read_manifest(path, pinned_version(manifest) if manifest else None) if path else None
