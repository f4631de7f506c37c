"""A record whose image cannot be decoded: the error names its shard, index, input key and dataset
version, through DataLoader workers too; `on_bad_record="skip"` logs, counts and skips it within
`max_bad_ratio`; a resumed position counts skipped records once; train.py's --on_bad_record.

The datasets are written here (bad_dataset.py), with undecodable files packed as records."""
from __future__ import annotations

import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from typing import List

from shardio import BadRecordError, Placement
from shardio.pipe_mode.pipe import PipeSource, pipe_path
from shardio.source.directory import ShardDirectory
from support import HAS_TORCH, needs_torch
from test_pipe import feed
from test_torch import write_channels

if HAS_TORCH:
    import torch

    from bad_dataset import BROKEN_JPEG, NOT_AN_IMAGE, VERSION, inputs, write_dataset
    from shardio.torch.dataset import ShardDataset, make_data_loader
    from shardio.torch.images import CpuDecodeOnly, CpuEvalTransform, CpuTrainTransform

CONTAINER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "container")
FORMATS = (".tfrecord", ".rec")


def decoded_name(record):
    """Decodes the image as training does, and hands over the record's name."""
    image, _label = CpuEvalTransform(32)(record)
    assert image.shape == (3, 32, 32)
    return record.filename or str(record.record_id)


def names(batch):
    return list(batch)


@needs_torch
class BadRecordTest(unittest.TestCase):
    def setUp(self) -> None:
        self.root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.root)

    def dataset(self, bad: dict, *, count: int = 40, extension: str = ".tfrecord", name: str = "dataset"):
        return write_dataset(os.path.join(self.root, name + extension), inputs(count, bad), extension=extension)

    def read(self, source, workers: int, **policy) -> List[str]:
        dataset = ShardDataset(source, placement=Placement(), transform=decoded_name, shuffle_buffer=8, **policy)
        return [name for batch in make_data_loader(dataset, 4, num_workers=workers, collate_fn=names) for name in batch]

    def test_a_bad_record_fails_naming_shard_record_key_and_version_with_0_1_and_2_workers(self) -> None:
        for extension in FORMATS:
            packed = self.dataset({13: ("cat/broken.jpg", BROKEN_JPEG)}, extension=extension, name=f"fail-{extension}")
            shard, position = packed.where("cat/broken.jpg")
            for workers in (0, 1, 2):
                with self.subTest(format=extension, workers=workers):
                    with self.assertRaises(BadRecordError) as raised:
                        self.read(ShardDirectory(packed.root), workers)
                    message = str(raised.exception)
                    self.assertIn(f"record {position} of shard {shard} (input cat/broken.jpg, dataset version {VERSION}) "
                                  "cannot be decoded: RuntimeError: ", message)
                    self.assertIn("--on_bad_record skip", message)

    def test_each_workers_transform_of_train_py_names_the_record(self) -> None:
        packed = self.dataset({6: ("cat/notes.txt", NOT_AN_IMAGE)})
        shard, position = packed.where("cat/notes.txt")
        for transform, error in ((CpuTrainTransform(32), "UnidentifiedImageError"), (CpuDecodeOnly(32), "UnidentifiedImageError")):
            with self.subTest(transform=type(transform).__name__):
                dataset = ShardDataset(ShardDirectory(packed.root), placement=Placement(), transform=transform)
                with self.assertRaisesRegex(BadRecordError, re.escape(
                        f"record {position} of shard {shard} (input cat/notes.txt, dataset version {VERSION}) cannot be "
                        f"decoded: {error}: ")):
                    list(make_data_loader(dataset, 4, num_workers=1, collate_fn=names))

    def test_a_recordio_record_is_named_by_its_record_id_where_the_channel_lacks_the_member_lists(self) -> None:
        packed = self.dataset({5: ("dog/notes.txt", NOT_AN_IMAGE)}, extension=".rec")
        shutil.rmtree(os.path.join(packed.root, "versions", VERSION, "members"))
        shard, position = packed.where("dog/notes.txt")
        with self.assertRaisesRegex(BadRecordError, re.escape(
                f"record {position} of shard {shard} (input record id 5 (no member list in this channel to name its key), "
                f"dataset version {VERSION}) cannot be decoded")):
            self.read(ShardDirectory(packed.root), 1)

    def test_skip_logs_each_bad_record_and_reads_every_other_record_once(self) -> None:
        bad = {3: ("cat/broken.jpg", BROKEN_JPEG), 30: ("dog/notes.txt", NOT_AN_IMAGE)}
        for extension in FORMATS:
            packed = self.dataset(bad, extension=extension, name=f"skip-{extension}")
            good = sorted(key if extension == ".tfrecord" else str(record_id)
                          for record_id, (key, _shard, _position) in enumerate(packed.records) if record_id not in bad)
            with self.subTest(format=extension, workers=0), self.assertLogs("shardio.bad_records", "WARNING") as logs:
                self.assertEqual(sorted(self.read(ShardDirectory(packed.root), 0, on_bad_record="skip", max_bad_ratio=0.1)), good)
            for key in ("cat/broken.jpg", "dog/notes.txt"):
                shard, position = packed.where(key)
                self.assertTrue(any(f"skipped record {position} of shard {shard} (input {key}, dataset version {VERSION}): "
                                    "RuntimeError: " in line for line in logs.output), logs.output)
            self.assertTrue(any("skipped 2 bad record(s) of the 40 it read" in line for line in logs.output), logs.output)
            with self.subTest(format=extension, workers=2):  # the workers log in their own processes (train.py's test reads them)
                self.assertEqual(sorted(self.read(ShardDirectory(packed.root), 2, on_bad_record="skip", max_bad_ratio=0.1)), good)

    def test_skip_fails_once_a_worker_skipped_more_than_max_bad_ratio_of_its_records(self) -> None:
        # 40 records, 2 workers: 20 each; 0.1 of 20 is 2 records, and worker 0's part holds 3 bad ones.
        packed = self.dataset({1: ("cat/a.jpg", BROKEN_JPEG), 5: ("dog/b.jpg", BROKEN_JPEG), 9: ("dog/c.jpg", NOT_AN_IMAGE)})
        dataset = ShardDataset(ShardDirectory(packed.root), placement=Placement(), transform=decoded_name, shuffle_buffer=0,
                               on_bad_record="skip", max_bad_ratio=0.1, seed=0)
        with self.assertRaisesRegex(BadRecordError, r"loader worker \d of rank 0 in epoch 0 skipped 3 bad records, the last "
                                                    r"record \d+ of shard .*: RuntimeError: .*; more than --max_bad_ratio 0.1 "
                                                    rf"of its 20 records allows \(2\)\. dataset version {VERSION}"):
            list(make_data_loader(dataset, 4, num_workers=2, collate_fn=names))
        # Two of them are within the budget.
        packed = self.dataset({1: ("cat/a.jpg", BROKEN_JPEG), 5: ("dog/b.jpg", BROKEN_JPEG)}, name="within")
        self.assertEqual(len(self.read(ShardDirectory(packed.root), 2, on_bad_record="skip", max_bad_ratio=0.1)), 38)

    def test_without_record_counts_the_ratio_is_checked_against_the_records_read_at_the_parts_end(self) -> None:
        packed = self.dataset({7: ("cat/broken.jpg", BROKEN_JPEG)})
        bare = os.path.join(self.root, "bare")  # shards alone: no manifest, no index, so no part size
        os.makedirs(bare)
        for key in packed.shard_keys:
            shutil.copy(os.path.join(packed.root, key), bare)
        self.assertEqual(len(self.read(ShardDirectory(bare), 0, on_bad_record="skip", max_bad_ratio=0.05)), 39)
        with self.assertRaisesRegex(BadRecordError, r"^loader worker 0 of rank 0 in epoch 0 skipped 1 of the 40 records it "
                                                    r"read, more than --max_bad_ratio 0.01 allows; dataset version none"):
            self.read(ShardDirectory(bare), 0, on_bad_record="skip", max_bad_ratio=0.01)

    def test_a_resumed_position_counts_the_skipped_records_once(self) -> None:
        packed = self.dataset({2: ("cat/a.jpg", BROKEN_JPEG), 11: ("dog/b.jpg", NOT_AN_IMAGE), 25: ("cat/c.jpg", BROKEN_JPEG)})
        good = sorted(key for key, _shard, _position in packed.records if key not in ("cat/a.jpg", "dog/b.jpg", "cat/c.jpg"))

        def loader():
            dataset = ShardDataset(ShardDirectory(packed.root), placement=Placement(), transform=decoded_name, shuffle_buffer=8,
                                   on_bad_record="skip", max_bad_ratio=0.2)
            return make_data_loader(dataset, 4, num_workers=2, collate_fn=names, resumable=True)

        for stop in (1, 3, 5):
            with self.subTest(stop_after_batches=stop):
                first = loader()
                read: List[str] = []
                for count, batch in enumerate(first, 1):
                    read += batch
                    if count == stop:
                        state = first.state_dict()
                        break
                second = loader()
                second.load_state_dict(state)
                for batch in second:
                    read += batch
                self.assertEqual(sorted(read), good)
                self.assertEqual(sum(second.state_dict()["yielded"]), 40)

    def test_pipe_mode_names_the_fifo_and_the_records_index_in_its_stream(self) -> None:
        packed = self.dataset({22: ("dog/notes.txt", NOT_AN_IMAGE)})
        data = b""
        for key in packed.shard_keys:
            with open(os.path.join(packed.root, key), "rb") as shard:
                data += shard.read()
        data_dir = os.path.join(self.root, "data")
        os.makedirs(data_dir)
        feed(pipe_path(data_dir, "train", 0), data)
        source = PipeSource(data_dir, "train", local_consumers=1, host_sharded=False, host_count=1,
                            fanout_dir=os.path.join(self.root, "fanout"), timeout=10)
        with self.assertRaisesRegex(BadRecordError, re.escape(
                f"record 22 of Pipe-mode stream {pipe_path(data_dir, 'train', 0)} (input dog/notes.txt, dataset version none "
                "(no versioned manifest)) cannot be decoded")):
            self.read(source, 0)

    def test_the_policy_is_checked_and_the_error_keeps_its_fields_when_pickled(self) -> None:
        packed = self.dataset({})
        directory = ShardDirectory(packed.root)
        with self.assertRaisesRegex(ValueError, r"on_bad_record \(--on_bad_record\) must be one of fail, skip, got 'ignore'"):
            ShardDataset(directory, on_bad_record="ignore")
        with self.assertRaisesRegex(ValueError, r"max_bad_ratio \(--max_bad_ratio\) must be between 0 and 1 .*got 1.5"):
            ShardDataset(directory, on_bad_record="skip", max_bad_ratio=1.5)
        error = pickle.loads(pickle.dumps(BadRecordError("m", shard="s", position=3, key="k", dataset_version="v")))
        self.assertEqual((str(error), error.shard, error.position, error.key, error.dataset_version), ("m", "s", 3, "k", "v"))
        self.assertEqual(str(BadRecordError("only the message, as PyTorch re-raises it")), "only the message, as PyTorch re-raises it")


@needs_torch
class TrainScriptBadRecordTest(unittest.TestCase):
    """train.py on the CPU over a dataset with an undecodable record."""

    def run_train(self, input_dir: str, *options: str) -> subprocess.CompletedProcess:
        command = [sys.executable, os.path.join(CONTAINER, "train.py"), "--input_dir", input_dir,
                   "--model_dir", os.path.join(input_dir, "model"), "--arch", "resnet18", "--image_size", "32",
                   "--batch_size", "4", "--log_interval", "2", "--master_port", "29531", "--num_workers", "1",
                   "--checkpoint_dir", os.path.join(input_dir, "checkpoints"), *options]
        return subprocess.run(command, capture_output=True, text=True, timeout=600)

    def test_skip_finishes_and_logs_the_record_and_fail_exits_naming_it(self) -> None:
        with tempfile.TemporaryDirectory() as input_dir:
            write_channels(input_dir, {"train": {"TrainingInputMode": "File"}}, {})
            packed = write_dataset(os.path.join(input_dir, "data", "train"), inputs(24, {9: ("dog/broken.jpg", BROKEN_JPEG)}))
            shard, position = packed.where("dog/broken.jpg")
            name = f"record {position} of shard {shard} (input dog/broken.jpg, dataset version {VERSION})"

            skipped = self.run_train(input_dir, "--on_bad_record", "skip", "--max_bad_ratio", "0.1")
            self.assertEqual(skipped.returncode, 0, skipped.stdout + skipped.stderr)
            self.assertIn("done steps=6", skipped.stdout)  # 23 records, batches of 4
            self.assertIn(f"skipped {name}: OSError: ", skipped.stderr)  # PIL's (CpuTrainTransform)

            failed = self.run_train(input_dir, "--checkpoint_dir", os.path.join(input_dir, "fresh"))  # not resumed at the end
            self.assertNotEqual(failed.returncode, 0)
            self.assertIn(f"BadRecordError: {name} cannot be decoded: OSError: ", failed.stderr)

            on_the_gpu = self.run_train(input_dir, "--loader", "gpu", "--on_bad_record", "skip")
            self.assertNotEqual(on_the_gpu.returncode, 0)
            self.assertIn("--loader gpu decodes on the GPU, a batch at once, so a bad record cannot be skipped: with "
                          "--on_bad_record skip use --loader cpu, hybrid or auto", on_the_gpu.stderr)


if __name__ == "__main__":
    unittest.main()
