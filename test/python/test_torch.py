"""The PyTorch dataset, DataLoader factory, image transforms and train.py, where PyTorch is
installed (CI has none: these tests are then skipped, and say so)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from typing import List

from shardio import Placement
from shardio.pipe_mode.pipe import pipe_path
from shardio.source.directory import ShardDirectory
from support import HAS_TORCH, needs_packed, needs_torch, packed
from test_pipe import concatenated_shards, feed

if HAS_TORCH:
    import torch

    from shardio.torch.dataset import ShardDataset, make_data_loader
    from shardio.torch.images import CpuTrainTransform, collate_encoded, encoded, normalize

CONTAINER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "container")
INTERVAL_LINE = re.compile(r"^epoch=\d+ step=\d+ samples/s=[0-9.]+ data_wait=[0-9.]+ loss=[0-9.]+$", re.M)


def name_and_label(record):
    return record.filename, record.label


def keep(batch):
    return batch


@needs_torch
@needs_packed
class ShardDatasetTest(unittest.TestCase):
    def test_workers_read_every_record_once_per_epoch_and_persistent_workers_see_set_epoch(self) -> None:
        directory = ShardDirectory(packed()["tfrecord"])
        dataset = ShardDataset(directory, placement=Placement(), transform=name_and_label, shuffle_buffer=4, seed=2)
        loader = make_data_loader(dataset, 5, num_workers=2, collate_fn=keep)
        self.assertTrue(loader.persistent_workers)
        orders: List[List[str]] = []
        for epoch in range(2):
            dataset.set_epoch(epoch)
            orders.append([name for batch in loader for name, _ in batch])
        for order in orders:
            self.assertEqual(len(order), packed()["files"])
            self.assertEqual(len(set(order)), len(order))
        self.assertNotEqual(orders[0], orders[1])

    def test_two_ranks_with_two_workers_each_read_disjoint_parts(self) -> None:
        directory = ShardDirectory(packed()["recordio"])
        seen = []
        for rank in range(2):
            dataset = ShardDataset(directory, placement=Placement(rank, 2, rank, 2), transform=lambda r: r.record_id)
            seen += [i for batch in make_data_loader(dataset, 4, num_workers=0, collate_fn=keep) for i in batch]
        self.assertEqual(sorted(seen), sorted(set(seen)))
        self.assertEqual(len(seen), packed()["files"])

    def test_the_loader_takes_num_workers_from_the_job_with_pinned_memory_only_where_a_gpu_is(self) -> None:
        with tempfile.TemporaryDirectory() as input_dir:
            os.makedirs(os.path.join(input_dir, "config"))
            with open(os.path.join(input_dir, "config", "hyperparameters.json"), "w") as handle:
                json.dump({"num_workers": "3"}, handle)
            dataset = ShardDataset(ShardDirectory(packed()["tfrecord"]))
            loader = make_data_loader(dataset, 8, input_dir=input_dir, prefetch_factor=6)
        self.assertEqual((loader.num_workers, loader.prefetch_factor, loader.persistent_workers), (3, 6, True))
        self.assertEqual(loader.pin_memory, torch.cuda.is_available())

    def test_decodes_and_augments_on_the_cpu_or_hands_the_encoded_bytes_to_the_gpu(self) -> None:
        directory = ShardDirectory(packed()["tfrecord"])
        record = directory.image(next(directory.read(0)), 0)
        image, label = CpuTrainTransform(24)(record)
        self.assertEqual((tuple(image.shape), image.dtype, label), ((3, 24, 24), torch.uint8, record.label))
        self.assertEqual(normalize(image.unsqueeze(0)).dtype, torch.float32)
        images, labels = collate_encoded([encoded(record), encoded(record)])
        self.assertEqual(bytes(images.images()[0].numpy()), record.image)
        self.assertEqual(labels.tolist(), [record.label, record.label])


@needs_torch
@needs_packed
class TrainScriptTest(unittest.TestCase):
    """train.py end to end on the CPU (gloo instead of NCCL), a small ResNet on 32-pixel crops."""

    def run_train(self, input_dir: str, *options: str) -> str:
        model_dir = os.path.join(input_dir, "model")
        command = [sys.executable, os.path.join(CONTAINER, "train.py"), "--input_dir", input_dir, "--model_dir", model_dir,
                   "--arch", "resnet18", "--image_size", "32", "--batch_size", "4", "--num_classes", "3",
                   "--log_interval", "2", "--master_port", "29517",
                   "--checkpoint_dir", os.path.join(input_dir, "checkpoints"), *options]
        run = subprocess.run(command, capture_output=True, text=True, timeout=600)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertTrue(os.path.exists(os.path.join(model_dir, "model.pt")))
        return run.stdout

    def test_file_mode_one_process_with_sized_workers(self) -> None:
        dataset = packed()["tfrecord"]
        with tempfile.TemporaryDirectory() as input_dir:
            write_channels(input_dir, {"train": {"TrainingInputMode": "File"}}, {"num_workers": "2"})
            os.symlink(dataset, os.path.join(input_dir, "data", "train"))
            output = self.run_train(input_dir, "--epochs", "2")
        self.assertIn("loader=cpu workers=2 (no GPU: the workers decode and augment)", output)
        self.assertEqual(len(INTERVAL_LINE.findall(output)), 2 * (-(-packed()["files"] // 4)) // 2)
        self.assertIn(f"done steps={2 * -(-packed()['files'] // 4)}", output)

    def test_pipe_mode_two_processes_with_a_worker_each_through_the_fan_out(self) -> None:
        dataset = packed()["recordio"]
        with tempfile.TemporaryDirectory() as input_dir:
            write_channels(input_dir, {"train": {"TrainingInputMode": "Pipe", "S3DistributionType": "FullyReplicated"}},
                           {"num_workers": "1"})
            for epoch in range(2):
                feed(pipe_path(os.path.join(input_dir, "data"), "train", epoch), concatenated_shards(dataset), delay=epoch)
            output = self.run_train(input_dir, "--epochs", "2", "--processes", "2")
        # 37 records over 2 ranks: 19 and 18, 5 batches each (DDP join evens out a last batch).
        self.assertIn("ranks=2", output)
        self.assertIn("done steps=10", output)
        self.assertEqual(len(INTERVAL_LINE.findall(output)), 5)


def write_channels(input_dir: str, channels: dict, hyperparameters: dict) -> None:
    os.makedirs(os.path.join(input_dir, "config"))
    os.makedirs(os.path.join(input_dir, "data"))
    for name, content in (("inputdataconfig.json", channels), ("hyperparameters.json", hyperparameters)):
        with open(os.path.join(input_dir, "config", name), "w", encoding="utf-8") as handle:
            json.dump(content, handle)


if __name__ == "__main__":
    unittest.main()
