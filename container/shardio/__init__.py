"""Readers for the shards cdk-training-io packs (TFRecord, MXNet RecordIO) inside the training
container, in the standard library only.

PyTorch lives in `shardio.torch` and NVIDIA DALI in `shardio.dali`: import them explicitly, so
that the readers work where neither is installed.

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

_install_moved_paths()

from .epoch.bad_records import BadRecordError
from .source.channels import channel_manifest, open_channel
from .format.crc32c import crc32c, mask, masked_crc32c, unmask
from .catalog.dataset_files import PINNED_MANIFEST_ENV, DatasetFiles, Shard, find_manifest, open_dataset
from .source.directory import ShardDirectory
from .source.environment import (
    ChannelConfig, hyperparameter, input_channels, placement_from_env, sized_dali_threads, sized_workers,
)
from .errors import FormatError
from .format.example import parse_example
from .pipe_mode.fifo import open_fifo
from .format.formats import read_records, to_image
from .format.index import merge_recordio_indexes, parse_index, record_offsets
from .catalog.manifest import DatasetManifest, ManifestShard, read_manifest
from .epoch.metrics import Interval, ThroughputMeter, interval_line, validation_line
from .pipe_mode.pipe import FanOutError, PipeChannel, PipeFanOut, PipeSource, pipe_path, wait_for_pipe
from .format.records import FramedRecord, ImageRecord, ShardFormat, format_of_path, sniff_format
from .format.recordio import IR_HEADER, RECORDIO_MAGIC, IRHeader, read_recordio, recordio_image, unpack_ir_header
from .epoch.order import BLOCK, OPEN_SHARDS, canonical_order, interleave, shuffled, split_segments
from .epoch.split import Consumer, Placement, Segment, consumed_records, consumer_of, consumer_share
from .epoch.stream import RecordSource, consumer_images
from .format.tfrecord import read_tfrecords, tfrecord_image

__all__ = [
    "__version__", "BadRecordError", "BLOCK", "canonical_order", "consumed_records", "interleave", "OPEN_SHARDS", "split_segments", "ChannelConfig", "channel_manifest", "Consumer", "consumer_images", "consumer_of", "consumer_share", "crc32c", "DatasetFiles",
    "DatasetManifest", "FanOutError", "find_manifest", "format_of_path", "FormatError", "FramedRecord",
    "hyperparameter", "ImageRecord", "input_channels", "Interval", "interval_line", "IR_HEADER", "IRHeader",
    "ManifestShard", "mask", "masked_crc32c", "merge_recordio_indexes", "open_channel", "open_dataset", "open_fifo",
    "parse_example", "parse_index", "PINNED_MANIFEST_ENV", "pipe_path", "PipeChannel", "PipeFanOut", "PipeSource",
    "Placement", "placement_from_env", "read_manifest", "read_recordio", "read_records", "read_tfrecords",
    "record_offsets", "recordio_image", "RECORDIO_MAGIC", "RecordSource", "Segment", "Shard", "ShardDirectory",
    "ShardFormat", "shuffled", "sized_dali_threads", "sized_workers", "sniff_format", "tfrecord_image", "ThroughputMeter", "to_image", "unmask", "unpack_ir_header",
    "validation_line", "wait_for_pipe",
]
