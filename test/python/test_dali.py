"""The DALI pipeline's wiring, against a stand-in of the documented DALI API that records each call.

NVIDIA DALI cannot be installed here (no GPU, no PyPI): this checks what shardio.dali passes to
fn.readers.tfrecord / fn.readers.mxnet and the GPU operators (paths and index files in order, the
merged RecordIO index, sharding by rank, shuffling, `device="mixed"`, `num_threads`), not what DALI
does with it. The GPU benchmark (bench/container-gpu) runs the real thing where DALI is installed.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import types
import unittest
from typing import Any, Dict, List
from unittest import mock

from shardio import FormatError, Placement
from shardio.source.directory import ShardDirectory
from shardio.format.recordio import RECORDIO_MAGIC
from support import manifest_file_channels, needs_packed, packed


class Node:
    """A DALI DataNode stand-in: remembers where it came from and whether `.gpu()` moved it."""

    def __init__(self, source: str) -> None:
        self.source = source

    def gpu(self) -> "Node":
        return Node(f"{self.source}.gpu()")


class FakeDali:
    """nvidia.dali, nvidia.dali.fn, .types, .tfrecord and .plugin.pytorch, recording every call."""

    def __init__(self) -> None:
        self.calls: List[tuple] = []
        self.pipelines: List[Dict[str, Any]] = []

    def op(self, name: str, outputs: Any = None):
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args, kwargs))
            return outputs(name) if outputs else Node(name)
        return call

    def modules(self) -> Dict[str, types.ModuleType]:
        dali = types.ModuleType("nvidia.dali")
        fn = types.SimpleNamespace(
            readers=types.SimpleNamespace(
                tfrecord=self.op("readers.tfrecord", lambda n: {"image/encoded": Node("encoded"), "image/class/label": Node("label")}),
                mxnet=self.op("readers.mxnet", lambda n: (Node("encoded"), Node("label")))),
            decoders=types.SimpleNamespace(image_random_crop=self.op("decoders.image_random_crop")),
            resize=self.op("resize"), crop_mirror_normalize=self.op("crop_mirror_normalize"),
            random=types.SimpleNamespace(coin_flip=self.op("random.coin_flip")))
        dali.fn = fn
        dali.types = types.SimpleNamespace(RGB="RGB", FLOAT="FLOAT")
        dali.pipeline_def = self.pipeline_def
        tfrecord = types.ModuleType("nvidia.dali.tfrecord")
        tfrecord.string, tfrecord.int64 = "string", "int64"
        tfrecord.FixedLenFeature = lambda shape, dtype, default: ("FixedLenFeature", shape, dtype, default)
        pytorch = types.ModuleType("nvidia.dali.plugin.pytorch")
        pytorch.LastBatchPolicy = types.SimpleNamespace(DROP="DROP", FILL="FILL", PARTIAL="PARTIAL")
        pytorch.DALIGenericIterator = self.iterator
        return {"nvidia": types.ModuleType("nvidia"), "nvidia.dali": dali, "nvidia.dali.tfrecord": tfrecord,
                "nvidia.dali.plugin": types.ModuleType("nvidia.dali.plugin"), "nvidia.dali.plugin.pytorch": pytorch}

    def pipeline_def(self, graph):
        def build(**options: Any) -> Any:
            outputs = graph()
            pipeline = {"options": options, "outputs": outputs, "built": False}
            self.pipelines.append(pipeline)
            return types.SimpleNamespace(build=lambda: pipeline.update(built=True), record=pipeline)
        return build

    def iterator(self, pipelines: list, output_map: list, **options: Any) -> Any:
        self.calls.append(("DALIGenericIterator", (len(pipelines), output_map), options))
        labels = mock.MagicMock()
        return iter([[{"images": "images", "labels": labels}]])

    def kwargs(self, name: str) -> Dict[str, Any]:
        matching = [kwargs for call, _args, kwargs in self.calls if call == name]
        assert len(matching) == 1, f"{name} called {len(matching)} times"
        return matching[0]


def hyperparameters(input_dir: str, values: dict) -> None:
    os.makedirs(os.path.join(input_dir, "config"))
    with open(os.path.join(input_dir, "config", "hyperparameters.json"), "w", encoding="utf-8") as handle:
        json.dump(values, handle)


@needs_packed
class DaliPipelineTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dali = FakeDali()
        patcher = mock.patch.dict(sys.modules, self.dali.modules())
        patcher.start()
        self.addCleanup(patcher.stop)
        from shardio.dali import dali_loader
        self.dali_loader = dali_loader

    def test_tfrecord_one_index_per_shard_sharded_over_the_jobs_ranks_decoded_on_the_gpu(self) -> None:
        directory = ShardDirectory(packed()["tfrecord"])
        placement = Placement(rank=3, world_size=4, local_rank=1, local_world_size=2)
        with tempfile.TemporaryDirectory() as input_dir:
            hyperparameters(input_dir, {"num_workers": "5", "dali_threads": "7"})
            loader = self.dali_loader(directory, 32, placement=placement, seed=10, crop=160, input_dir=input_dir)

        reader = self.dali.kwargs("readers.tfrecord")
        self.assertEqual(reader["path"], [shard.path for shard in directory.shards])
        self.assertEqual(reader["index_path"], [shard.index_path for shard in directory.shards])
        self.assertEqual([os.path.basename(p)[:-4] for p in reader["index_path"]],
                         [os.path.basename(p)[:-9] for p in reader["path"]])
        self.assertEqual(reader["features"], {
            "image/encoded": ("FixedLenFeature", (), "string", ""),
            "image/class/label": ("FixedLenFeature", [1], "int64", -1),
        })
        self.assertEqual({k: reader[k] for k in ("shard_id", "num_shards", "random_shuffle", "pad_last_batch", "name")},
                         {"shard_id": 3, "num_shards": 4, "random_shuffle": True, "pad_last_batch": True, "name": "Reader"})
        self.assertEqual(self.dali.kwargs("decoders.image_random_crop")["device"], "mixed")
        self.assertEqual(self.dali.kwargs("resize"), {"resize_x": 160, "resize_y": 160})
        normalize = self.dali.kwargs("crop_mirror_normalize")
        self.assertEqual((normalize["crop"], normalize["output_layout"], normalize["dtype"]), ((160, 160), "CHW", "FLOAT"))
        self.assertEqual([round(m, 3) for m in normalize["mean"]], [123.675, 116.28, 103.53])
        self.assertEqual(self.dali.kwargs("random.coin_flip"), {"probability": 0.5})
        [pipeline] = self.dali.pipelines
        self.assertEqual(pipeline["options"], {"batch_size": 32, "num_threads": 7, "device_id": 1, "seed": 13})
        self.assertTrue(pipeline["built"])
        self.assertEqual(pipeline["outputs"][1].source, "label.gpu()")
        iterator = self.dali.kwargs("DALIGenericIterator")
        self.assertEqual(iterator, {"reader_name": "Reader", "last_batch_policy": "DROP", "auto_reset": True})
        images, labels = next(iter(loader))
        self.assertEqual(images, "images")

    def test_recordio_one_merged_index_over_this_hosts_shards_sharded_over_the_hosts_ranks(self) -> None:
        dataset = packed()["recordio"]
        shards = ShardDirectory(dataset).shards
        with tempfile.TemporaryDirectory() as data_dir:
            # What ShardedByS3Key gives the second of two hosts from the version's ManifestFile channels.
            manifest_file_channels(dataset, data_dir, hosts=2, host=1)
            directory = ShardDirectory(os.path.join(data_dir, "train"), os.path.join(data_dir, "index"), host_sharded=True)
            placement = Placement(rank=5, world_size=8, local_rank=1, local_world_size=4)
            with tempfile.TemporaryDirectory() as input_dir:
                hyperparameters(input_dir, {"num_workers": "5"})
                self.dali_loader(directory, 16, placement=placement, input_dir=input_dir)

            reader = self.dali.kwargs("readers.mxnet")
            self.assertEqual(reader["path"], [shard.path for shard in directory.shards])
            self.assertEqual(len(reader["path"]), len(shards[1::2]))
            self.assertEqual((reader["shard_id"], reader["num_shards"]), (1, 4))
            self.assertEqual(self.dali.pipelines[0]["options"]["num_threads"], 5)
            [merged] = reader["index_path"]
            with open(merged, encoding="ascii") as handle:
                lines = [line.split("\t") for line in handle.read().splitlines()]
            os.unlink(merged)
            concatenated = b"".join(open(path, "rb").read() for path in reader["path"])
            self.assertEqual(len(lines), sum(len(directory.offsets(i)) for i in range(len(directory.shards))))
            for _key, offset in lines:
                self.assertEqual(concatenated[int(offset):int(offset) + 4], RECORDIO_MAGIC.to_bytes(4, "little"))

    def test_a_byte_changed_in_any_shard_is_refused_naming_it_before_the_pipeline_is_built(self) -> None:
        from test_reader_safety import copy_of, flip_byte

        for name in ("tfrecord", "recordio"):
            root = copy_of(self, name)
            directory = ShardDirectory(root, check_crc=False)
            shard = directory.shards[-1]
            flip_byte(shard.path, directory.offsets(len(directory.shards) - 1)[-1] + 40)
            with self.subTest(format=name), self.assertRaisesRegex(
                    FormatError, rf"^{shard.path} \(shard {shard.key}\): its {shard.size} bytes have CRC-32C? 0x[0-9a-f]{{8}} but "
                                 rf"{root}/manifest.json lists 0x[0-9a-f]{{8}}: the shard changed after packing"):
                self.dali_loader(ShardDirectory(root), 8, placement=Placement(), num_threads=2)
            self.assertEqual(self.dali.pipelines, [], "no pipeline is built")
            self.dali_loader(directory, 8, placement=Placement(), num_threads=2)  # check_crc=False reads it anyway
            self.assertEqual(len(self.dali.pipelines), 1)
            self.dali.pipelines.clear()

    def test_shards_without_index_files_are_refused(self) -> None:
        with tempfile.TemporaryDirectory() as shards_only:
            for shard in ShardDirectory(packed()["tfrecord"]).shards:
                os.symlink(shard.path, os.path.join(shards_only, os.path.basename(shard.path)))
            with self.assertRaisesRegex(FileNotFoundError, r"DALI's readers need the index files"):
                self.dali_loader(ShardDirectory(shards_only), 8, placement=Placement(), num_threads=2)


if __name__ == "__main__":
    unittest.main()
