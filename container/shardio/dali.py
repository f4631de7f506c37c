"""NVIDIA DALI: a pipeline that reads the shards with DALI's own readers and decodes and augments
on the GPU (`device="mixed"`: nvJPEG), for when the CPUs cannot keep up with the GPUs.

Deliberately thin: the readers, sharding and shuffling are DALI's; what is ours is the wiring:
- The shards and their indexes in the manifest's order (the directory's: ShardDirectory).
- TFRecord: `fn.readers.tfrecord` with one index per shard (the packer's index/*.idx files).
- RecordIO: `fn.readers.mxnet` takes ONE index with offsets global over its `path` list: the
  version's index/all.idx when every shard it covers is here; with ShardedByS3Key a host has only
  some, so the index is merged here from the per-shard indexes of the shards present, in path order.
- Sharding by rank (`shard_id`, `num_shards`): the job's ranks, or with ShardedByS3Key the host's.
- `random_shuffle` (a buffer of `initial_fill` samples; the packer shuffled globally), a seed
  per rank, `pad_last_batch` so every rank has as many batches (DDP needs equal step counts).
- `num_threads` from the `dali_threads` hyperparameter TrainingJob sizes for the instance.
- DALI's readers check no CRC, so with the directory's check_crc (the default) every shard is checked
  whole against its manifest's CRC-32C, or CRC-32 where no fast CRC-32C is installed, before the
  pipeline is built (ShardDirectory.check_every_shard): a byte changed anywhere is refused naming
  the shard. Each process reads every shard once for it (DALI moves each rank to the next part of
  the samples every epoch, stick_to_shard=False), at the checksum's GB/s or the disk's rate.
A record DALI cannot decode fails its pipeline with DALI's error, which names no record: the
readers' bad-record policy (bad_records.py) is the PyTorch workers', and train.py refuses
`--on_bad_record skip` with DALI.
DALI cannot be installed where the tests run: they check this wiring against a stand-in of the
documented API (test/python/test_dali.py); the GPU benchmark runs it for real where DALI is present.
"""
from __future__ import annotations

import os
import tempfile
from typing import Any, Dict, Iterator, Optional, Tuple

from .source.directory import ShardDirectory
from .source.environment import INPUT_DIR, placement_from_env, sized_dali_threads
from .torch.imagenet import IMAGENET_MEAN, IMAGENET_STD
from .format.records import ShardFormat
from .epoch.split import Placement, consumer_of

READER_NAME = "Reader"
DEFAULT_INITIAL_FILL = 4096


def reader_arguments(directory: ShardDirectory, merged_index_dir: Optional[str] = None) -> Dict[str, Any]:
    """`path` and `index_path` of the DALI reader for these shards (writes the merged RecordIO index
    when the version's global one does not cover exactly them)."""
    if not directory.indexed:
        raise FileNotFoundError("DALI's readers need the index files: pass the index channel (index/ prefix)")
    paths = [shard.path for shard in directory.shards]
    if directory.format is ShardFormat.TFRECORD:
        return {"path": paths, "index_path": [shard.index_path for shard in directory.shards]}
    if directory.global_index_path:
        return {"path": paths, "index_path": [directory.global_index_path]}
    handle, merged = tempfile.mkstemp(prefix="shardio-", suffix=".idx", dir=merged_index_dir)
    with os.fdopen(handle, "w", encoding="ascii") as index:
        index.write(directory.merged_recordio_index())
    return {"path": paths, "index_path": [merged]}


def build_pipeline(
    directory: ShardDirectory,
    *,
    batch_size: int,
    num_threads: int,
    device_id: int,
    shard_id: int,
    num_shards: int,
    seed: int,
    crop: int = 224,
    initial_fill: int = DEFAULT_INITIAL_FILL,
    merged_index_dir: Optional[str] = None,
):
    """A built DALI pipeline with outputs (images: float CHW normalized on the GPU, labels on the GPU)."""
    from nvidia.dali import fn, pipeline_def, types
    import nvidia.dali.tfrecord as tfrec

    reader = dict(reader_arguments(directory, merged_index_dir), random_shuffle=True, initial_fill=initial_fill,
                  shard_id=shard_id, num_shards=num_shards, pad_last_batch=True, name=READER_NAME)

    @pipeline_def
    def training_pipeline():
        if directory.format is ShardFormat.TFRECORD:
            features = fn.readers.tfrecord(**reader, features={
                "image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
                "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
            })
            jpegs, labels = features["image/encoded"], features["image/class/label"]
        else:
            jpegs, labels = fn.readers.mxnet(**reader)
        images = fn.decoders.image_random_crop(jpegs, device="mixed", output_type=types.RGB,
                                               random_aspect_ratio=[3 / 4, 4 / 3], random_area=[0.08, 1.0])
        images = fn.resize(images, resize_x=crop, resize_y=crop)
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW", crop=(crop, crop),
                                          mean=[m * 255 for m in IMAGENET_MEAN], std=[s * 255 for s in IMAGENET_STD],
                                          mirror=fn.random.coin_flip(probability=0.5))
        return images, labels.gpu()

    pipeline = training_pipeline(batch_size=batch_size, num_threads=num_threads, device_id=device_id, seed=seed)
    pipeline.build()
    return pipeline


class DaliLoader:
    """Batches of (images, int64 labels) on the GPU, epoch after epoch, like a DataLoader."""

    def __init__(self, pipeline: Any) -> None:
        from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

        # DROP: with pad_last_batch every rank ends on the same (padded) batch; it is left out.
        self._iterator = DALIGenericIterator([pipeline], ["images", "labels"], reader_name=READER_NAME,
                                             last_batch_policy=LastBatchPolicy.DROP, auto_reset=True)

    def set_epoch(self, epoch: int) -> None:
        """DALI reshuffles by itself; here for the same loop as the PyTorch loader."""

    def __len__(self) -> int:
        return len(self._iterator)

    def __iter__(self) -> Iterator[Tuple[Any, Any]]:
        for batch in self._iterator:
            yield batch[0]["images"], batch[0]["labels"].squeeze(-1).long()


def dali_loader(
    directory: ShardDirectory,
    batch_size: int,
    *,
    placement: Optional[Placement] = None,
    num_threads: Optional[int] = None,
    device_id: Optional[int] = None,
    seed: int = 0,
    crop: int = 224,
    input_dir: str = INPUT_DIR,
) -> DaliLoader:
    """The DALI loader of this process: its rank's shard of the samples, on its GPU."""
    placement = placement or placement_from_env()
    directory.check_every_shard()
    consumer = consumer_of(placement, 0, 1, directory.host_sharded)
    pipeline = build_pipeline(
        directory,
        batch_size=batch_size,
        num_threads=sized_dali_threads(input_dir) if num_threads is None else num_threads,
        device_id=placement.local_rank if device_id is None else device_id,
        shard_id=consumer.index,
        num_shards=consumer.count,
        seed=seed + consumer.index,
        crop=crop,
    )
    return DaliLoader(pipeline)
