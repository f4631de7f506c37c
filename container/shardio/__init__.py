"""Readers for the shards cdk-training-io packs (TFRecord, MXNet RecordIO) inside the training
container, in the standard library only.

The front door is `data_loader(source, batch_size, options)`: a `Source` (where the dataset is, which
version, how S3 is read) and `LoaderOptions` (the transform, shuffle, bad-record policy and the
DataLoader's settings), each checked once where it is made. `shardio.data_loader` imports PyTorch
when it is first used (it lives in `shardio.torch`); NVIDIA DALI's pipeline is `shardio.dali`: the
rest of the readers work where neither is installed. The subpackages, by purpose: `format/` (the
shards' bytes), `catalog/` (the layout's keys, the manifest), `source/` (a folder, an S3 prefix, a
channel), `pipe_mode/` (SageMaker's FIFOs), `epoch/` (order, split, position, bad records, metric
lines), `torch/` (the DataLoader, decoding, checkpoints).

What the readers guarantee (tested in test/python/):
- Every record of an epoch once, or an error: never a quiet partial epoch. A shard holding fewer or
  more records than its index or the manifest lists is a FormatError naming the shard and both
  counts (directory.py); a Pipe-mode epoch is counted against the manifest where the whole stream
  reaches the host, and a fan-out consumer against what it was dealt (pipe.py).
- A byte changed after packing is a FormatError, by default on every source: each TFRecord's CRCs
  as it is read (naming the shard, the record and its offset), a RecordIO shard's CRC-32C whole before
  its first record; without a fast CRC-32C, any shard's CRC-32 whole with zlib where the manifest
  lists it (shard_crc.py); `check_crc=False` opts out.
- A manifest's names never lead out of the dataset or the cache: datasetVersion is a version id and
  every key has the layout's shape, or the manifest is refused (manifest.py, layout.py).
- No secret of an endpoint or presigned URL is in any error or log line (errors.redact).
- Bad bytes are a FormatError naming the file or stream and the offset; a length header that cannot
  be right (past the file's end, or in a stream past a record's 128 MiB) is refused before anything
  is allocated (records.py).
- Pipe mode never waits without a timeout that names what it waited for, and a fan-out's failure is
  raised at once in every consumer, in that epoch and the later ones (pipe.py, fifo.py).
- An epoch's order is canonical: the seed, the epoch and the dataset decide it, not the worker or
  rank count (order.py); each pass over a loader is the next epoch unless set_epoch chose one.
- A resumed loader position is restored only on the dataset version it was saved on (mid-epoch);
  on another it is refused naming both versions (dataset.py); train.py pins the saved version.
  Given every rank's position it resumes at another worker or rank count, every record of the
  epoch once across the two runs (position.py).
- A record whose image the transform cannot decode is a BadRecordError naming its shard, index,
  input key and dataset version, or with on_bad_record="skip" is logged, skipped and counted, up to
  max_bad_ratio of each loader worker's records in an epoch (bad_records.py).
"""
# The npm package's version (package.json): the wheel takes its version from here, and
# TrainingCode.fromAsset(..., { includeReaders: true }) compares it with a user's own shardio.
__version__ = "0.1.0"

from ._moved import install as _install_moved_paths

import importlib as _importlib
import warnings as _warnings
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from .catalog.dataset_files import open_dataset
from .catalog.manifest import DatasetManifest
from .epoch.bad_records import BadRecordError
from .epoch.metrics import ThroughputMeter, interval_line, validation_line
from .epoch.options import LoaderOptions
from .epoch.split import Placement
from .errors import FormatError
from .format.formats import read_records
from .source.location import Source
from .source.s3_dataset import S3Options

_install_moved_paths()

if _TYPE_CHECKING:
    from .torch.dataset import data_loader

__all__ = [
    "__version__", "BadRecordError", "data_loader", "DatasetManifest", "FormatError", "interval_line", "LoaderOptions",
    "open_dataset", "Placement", "read_records", "S3Options", "Source", "ThroughputMeter", "validation_line",
]

# What the root exported in 0.1.0 beyond __all__, by its module: still importable from the root
# for one release, with a DeprecationWarning that names the module.
_MOVED = {
    "shardio.catalog.dataset_files": "PINNED_MANIFEST_ENV DatasetFiles Shard find_manifest",
    "shardio.catalog.manifest": "ManifestShard read_manifest",
    "shardio.epoch.metrics": "Interval",
    "shardio.epoch.order": "BLOCK OPEN_SHARDS canonical_order interleave shuffled split_segments",
    "shardio.epoch.split": "Consumer Segment consumed_records consumer_of consumer_share",
    "shardio.epoch.stream": "RecordSource consumer_images",
    "shardio.format.crc32c": "crc32c mask masked_crc32c unmask",
    "shardio.format.example": "parse_example",
    "shardio.format.formats": "to_image",
    "shardio.format.index": "merge_recordio_indexes parse_index record_offsets",
    "shardio.format.recordio": "IR_HEADER RECORDIO_MAGIC IRHeader read_recordio recordio_image unpack_ir_header",
    "shardio.format.records": "FramedRecord ImageRecord ShardFormat format_of_path sniff_format",
    "shardio.format.tfrecord": "read_tfrecords tfrecord_image",
    "shardio.pipe_mode.fifo": "open_fifo",
    "shardio.pipe_mode.pipe": "FanOutError PipeChannel PipeFanOut PipeSource pipe_path wait_for_pipe",
    "shardio.source.channels": "channel_manifest open_channel",
    "shardio.source.directory": "ShardDirectory",
    "shardio.source.environment": "ChannelConfig hyperparameter input_channels placement_from_env sized_dali_threads sized_workers",
}
_HOME = {name: module for module, names in _MOVED.items() for name in names.split()}


def __getattr__(name: str) -> _Any:
    # data_loader imports PyTorch: only when asked for, so that `import shardio` works without it.
    if name == "data_loader":
        return _importlib.import_module("shardio.torch.dataset").data_loader
    if name in _HOME:
        _warnings.warn(f"shardio.{name} is deprecated at the package's root and is removed there in the next release: "
                       f"from {_HOME[name]} import {name}", DeprecationWarning, stacklevel=2)
        return getattr(_importlib.import_module(_HOME[name]), name)
    raise AttributeError(f"module 'shardio' has no attribute {name!r}")
