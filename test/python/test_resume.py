"""Checkpoints and resumption: the loader restarts an epoch at the record it had reached, and
train.py stopped mid-epoch and started again trains on exactly the records of one uninterrupted run."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from typing import Dict, List

from shardio import Placement
from shardio.source.directory import ShardDirectory
from support import HAS_TORCH, needs_packed, needs_torch, packed
from test_torch import CONTAINER, keep, name_and_label, write_channels
from versioned import SECOND, Versioned, make_versioned, manifest_file_channels

if HAS_TORCH:
    import torch

    from shardio.torch.checkpoint import checkpoint_steps, load_checkpoint, newest_checkpoint, save_checkpoint
    from shardio.torch.dataset import ShardDataset, make_data_loader

VALIDATION_LINE = re.compile(r"^epoch=(\d+) step=\d+ val_loss=[0-9.]+ val_accuracy=[0-9.]+$", re.M)


def loader(placement: Placement = Placement(), source=None):
    dataset = ShardDataset(source or ShardDirectory(packed()["tfrecord"]), placement=placement, transform=name_and_label,
                           shuffle_buffer=4, seed=5)
    return make_data_loader(dataset, 3, num_workers=2, collate_fn=keep, resumable=True)


def publish(dataset: Versioned, version: str) -> None:
    """Makes `version` the current one: its manifest copied to the root, as the finalizer does."""
    shutil.copyfile(os.path.join(dataset.root, dataset.manifest_key(version)), os.path.join(dataset.root, "manifest.json"))


@needs_torch
@needs_packed
class ResumableLoaderTest(unittest.TestCase):
    def test_a_loader_restored_mid_epoch_hands_out_the_rest_of_the_epoch_exactly(self) -> None:
        for stop_after in (1, 4, 7):
            with self.subTest(stop_after=stop_after):
                whole = loader()
                whole.set_epoch(1)
                expected = [name for batch in whole for name, _ in batch]
                first = loader()
                first.set_epoch(1)
                seen: List[str] = []
                for index, batch in enumerate(first):
                    seen += [name for name, _ in batch]
                    if index + 1 == stop_after:
                        break
                state = first.state_dict(num_samples=len(seen))
                resumed = loader()
                resumed.load_state_dict(state)
                resumed.set_epoch(1)
                rest = [name for batch in resumed for name, _ in batch]
                self.assertEqual(sorted(seen + rest), sorted(expected))
                self.assertEqual(len(seen + rest), packed()["files"])
                # The next epoch starts from its beginning.
                resumed.set_epoch(2)
                self.assertEqual(len([name for batch in resumed for name, _ in batch]), packed()["files"])

    def test_a_position_saved_mid_epoch_with_another_seed_or_order_is_refused(self) -> None:
        first = loader()
        first.set_epoch(0)
        next(iter(first))
        state = first.state_dict()
        with self.assertRaisesRegex(ValueError, r"the record order depends on seed 1 -> 5"):
            loader().load_state_dict(dict(state, seed=1))
        # A position of the shardio before the canonical order: no "order", no "runs".
        old = {key: value for key, value in state.items() if key not in ("order", "runs")}
        with self.assertRaisesRegex(ValueError, r"saved mid-epoch by a shardio whose record order is the contiguous split "
                                                r"before the canonical order, not canonical-blocks-1: .*Start the epoch over"):
            loader().load_state_dict(old)
        loader().load_state_dict(dict(old, yielded=[0, 0], sample_in_epoch=0))  # an epoch's start: any order will do

    def test_a_position_saved_mid_epoch_on_one_dataset_version_is_refused_on_another_naming_both(self) -> None:
        with tempfile.TemporaryDirectory() as root:
            dataset = make_versioned(packed()["tfrecord"], os.path.join(root, "dataset"))  # type: ignore[arg-type]
            first = loader(source=ShardDirectory(dataset.root, manifest=dataset.manifest_key(dataset.first)))
            first.set_epoch(0)
            for _batch in first:
                break
            state = first.state_dict()
            self.assertEqual(state["dataset_version"], dataset.first)
            current = loader(source=ShardDirectory(dataset.root))
            with self.assertRaisesRegex(ValueError, rf"saved reading dataset version {dataset.first} but this loader reads {SECOND}: "
                                                    r".* twice and others never\. Pin the version the job started on "
                                                    rf"\(Source\(\.\.\., version=\"{dataset.first}\"\); in a job "
                                                    rf"SHARDIO_DATASET_MANIFEST=versions/{dataset.first}/manifest.json, or train.py's "
                                                    rf"--dataset_manifest versions/{dataset.first}/manifest.json; .*start the epoch over"):
                current.load_state_dict(state)
            # At an epoch's start no record was counted: any version will do.
            current.load_state_dict(dict(state, yielded=[0, 0], sample_in_epoch=0))

    def test_checkpoints_are_complete_only_with_every_rank_and_the_newest_are_kept(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            for step in (10, 20, 30, 40):
                save_checkpoint(directory, step, 0, {"step": step}, {"epoch": 0}, keep=2)
                if step < 40:
                    save_checkpoint(directory, step, 1, None, {"epoch": 0, "rank": 1})
            self.assertEqual(checkpoint_steps(directory), [30, 40])
            self.assertEqual(newest_checkpoint(directory, 1), 40)
            self.assertEqual(newest_checkpoint(directory, 2), 30)
            self.assertEqual(load_checkpoint(directory, 30, 1, "cpu"), {"training": {"step": 30}, "loader": {"epoch": 0, "rank": 1},
                                                                    "loaders": [{"epoch": 0}, {"epoch": 0, "rank": 1}]})
            self.assertFalse([name for name in os.listdir(directory) if ".tmp" in name])

    def test_a_checkpoint_saved_at_another_rank_count_is_complete_with_its_own_ranks_and_gives_every_ranks_position(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            save_checkpoint(directory, 10, 0, {"step": 10}, {"epoch": 1, "rank": 0, "world_size": 2})
            self.assertIsNone(newest_checkpoint(directory, 1))  # rank 1 of the saving job has not written yet
            save_checkpoint(directory, 10, 1, None, {"epoch": 1, "rank": 1, "world_size": 2})
            self.assertEqual([newest_checkpoint(directory, ranks) for ranks in (1, 2, 3)], [10, 10, 10])
            restored = load_checkpoint(directory, 10, 2, "cpu")  # rank 2 of a job of 3: rank 0's as its own
            self.assertEqual((restored["loader"]["rank"], [p["rank"] for p in restored["loaders"]]), (0, [0, 1]))


@needs_torch
@needs_packed
class TrainResumeTest(unittest.TestCase):
    """train.py on the CPU with a small ResNet: stopped mid-epoch (--max_steps, SIGTERM) and resumed."""

    def run_train(self, input_dir: str, *options: str, expect_code: int = 0) -> str:
        command = [sys.executable, os.path.join(CONTAINER, "train.py"), "--input_dir", input_dir,
                   "--model_dir", os.path.join(input_dir, "model"), "--arch", "resnet18", "--image_size", "32",
                   "--batch_size", "4", "--num_classes", "3", "--log_interval", "2", "--master_port", "29519",
                   "--epochs", "2", "--checkpoint_interval", "4", *options]
        run = subprocess.run(command, capture_output=True, text=True, timeout=600)
        self.assertEqual(run.returncode, expect_code, run.stdout + run.stderr)
        return run.stdout + run.stderr

    def job(self, root: str, name: str, train: str = "") -> Dict[str, str]:
        """A job whose train channel is the dataset root `train` (the packed TFRecord dataset by default)."""
        input_dir = os.path.join(root, name)
        write_channels(input_dir, {"train": {"TrainingInputMode": "File"}, "validation": {"TrainingInputMode": "File"}},
                       {"num_workers": "2"})
        os.symlink(train or packed()["tfrecord"], os.path.join(input_dir, "data", "train"))
        os.symlink(packed()["recordio"], os.path.join(input_dir, "data", "validation"))
        return {"input": input_dir, "checkpoints": os.path.join(root, f"{name}-checkpoints"),
                "records": os.path.join(root, f"{name}-records")}

    def batches(self, job: Dict[str, str], rank: int) -> List[List[str]]:
        with open(f"{job['records']}.rank-{rank}", encoding="utf-8") as handle:
            return [line.split() for line in handle]

    def records(self, job: Dict[str, str], rank: int) -> List[str]:
        return [name for batch in self.batches(job, rank) for name in batch]

    def test_stopped_mid_epoch_and_resumed_it_trains_on_the_records_of_one_uninterrupted_run(self) -> None:
        with tempfile.TemporaryDirectory() as root:
            whole, parts = self.job(root, "whole"), self.job(root, "parts")
            output = self.run_train(whole["input"], "--checkpoint_dir", whole["checkpoints"], "--record_log", whole["records"])
            steps = int(re.search(r"^done steps=(\d+)", output, re.M).group(1))  # type: ignore[union-attr]
            self.assertEqual([int(epoch) for epoch in VALIDATION_LINE.findall(output)], [0, 1])

            first = self.run_train(parts["input"], "--checkpoint_dir", parts["checkpoints"], "--record_log", parts["records"],
                                   "--max_steps", "7")
            self.assertIn("done steps=7", first)
            saved = torch.load(os.path.join(parts["checkpoints"], "step-000000007.pt"))
            self.assertEqual((saved["epoch"], saved["step"]), (0, 7))
            second = self.run_train(parts["input"], "--checkpoint_dir", parts["checkpoints"], "--record_log", parts["records"])
            self.assertIn("resumed from", second)
            # 7 batches of 4 from the two workers in turn: 4 from worker 0, 3 from worker 1.
            self.assertIn("step=7 at record 28 of epoch 0", second)
            self.assertIn(f"done steps={steps}", second)

            # Each epoch's records, across both runs, are those of the uninterrupted run's epoch, each once
            # (the batches of the two workers interleave from worker 0 again after a resume).
            files = packed()["files"]
            interrupted, uninterrupted = self.records(parts, 0), self.records(whole, 0)
            self.assertEqual(len(interrupted), 2 * files)
            for epoch in range(2):
                part = interrupted[epoch * files:(epoch + 1) * files]
                self.assertEqual(sorted(part), sorted(uninterrupted[epoch * files:(epoch + 1) * files]))
                self.assertEqual(len(set(part)), files)

    def test_with_data_a_packed_folder_outside_a_job_it_trains_stops_and_resumes_at_the_record_it_reached(self) -> None:
        with tempfile.TemporaryDirectory() as root:
            # No SageMaker folders: --input_dir is empty, the dataset a folder (--data) and a file:// URL (--validation_data).
            empty = os.path.join(root, "no-job")
            os.mkdir(empty)
            checkpoints, records = os.path.join(root, "checkpoints"), os.path.join(root, "records")
            data = ("--data", str(packed()["tfrecord"]), "--validation_data", f"file://{packed()['recordio']}", "--num_workers", "2",
                    "--checkpoint_dir", checkpoints, "--record_log", records)
            first = self.run_train(empty, *data, "--max_steps", "7")
            self.assertIn("done steps=7", first)
            self.assertRegex(first, r"(?m)^epoch=0 step=6 samples/s=[0-9.]+ data_wait=[0-9.]+ loss=[0-9.]+$")
            second = self.run_train(empty, *data)
            self.assertIn("step=7 at record 28 of epoch 0", second)
            self.assertEqual([int(epoch) for epoch in VALIDATION_LINE.findall(second)], [0, 1])
            files = packed()["files"]
            with open(f"{records}.rank-0", encoding="utf-8") as handle:
                names = [name for line in handle for name in line.split()]
            self.assertEqual(len(names), 2 * files)
            for epoch in range(2):
                self.assertEqual(len(set(names[epoch * files:(epoch + 1) * files])), files)

    def test_stopped_mid_epoch_and_resumed_with_another_worker_count_it_trains_on_every_record_once(self) -> None:
        with tempfile.TemporaryDirectory() as root:
            job = self.job(root, "resized")
            once = ("--checkpoint_dir", job["checkpoints"], "--record_log", job["records"], "--epochs", "1",
                    "--validation_channel", "none")
            self.run_train(job["input"], *once, "--max_steps", "3")
            # 25 records left for 4 workers: 6, 6, 6 and 7, no batch of one (batch norm refuses it)
            second = self.run_train(job["input"], *once, "--num_workers", "4")
            self.assertIn("step=3 at record 12 of epoch 0", second)
            names = self.records(job, 0)
            self.assertEqual(sorted(names), sorted(set(names)))
            self.assertEqual(len(names), packed()["files"])

    def test_resumed_after_a_newer_version_was_published_it_reads_the_version_it_started_on(self) -> None:
        with tempfile.TemporaryDirectory() as root:
            dataset = make_versioned(packed()["tfrecord"], os.path.join(root, "dataset"))  # type: ignore[arg-type]
            publish(dataset, dataset.first)  # the current version when the job starts
            whole, parts = self.job(root, "whole", dataset.root), self.job(root, "parts", dataset.root)
            once = ("--epochs", "1", "--validation_channel", "none")
            self.run_train(whole["input"], "--checkpoint_dir", whole["checkpoints"], "--record_log", whole["records"], *once)
            self.run_train(parts["input"], "--checkpoint_dir", parts["checkpoints"], "--record_log", parts["records"],
                           "--max_steps", "3", *once)
            publish(dataset, SECOND)
            second = self.run_train(parts["input"], "--checkpoint_dir", parts["checkpoints"], "--record_log", parts["records"], *once)
            self.assertIn(f"reads dataset version {dataset.first}, the one the checkpoint of step 3 was saved on "
                          f"(the channel's current version is {SECOND})", second)
            self.assertIn("step=3 at record 12 of epoch 0", second)
            names = self.records(parts, 0)
            self.assertEqual(sorted(names), sorted(self.records(whole, 0)))
            self.assertEqual(len(set(names)), packed()["files"])

    def test_resumed_on_channels_without_the_version_it_started_on_it_fails_naming_both_or_restarts_the_epoch(self) -> None:
        with tempfile.TemporaryDirectory() as root:
            dataset = make_versioned(packed()["tfrecord"], os.path.join(root, "dataset"))  # type: ignore[arg-type]
            first = self.job(root, "first", dataset.root)
            once = ("--checkpoint_dir", first["checkpoints"], "--epochs", "1", "--validation_channel", "none")
            self.run_train(first["input"], "--dataset_manifest", dataset.manifest_key(dataset.first), "--max_steps", "3", *once)
            # The restarted job is given the newer version's ManifestFile channels.
            second = os.path.join(root, "second")
            write_channels(second, {"train": {"TrainingInputMode": "File"}, "index": {"TrainingInputMode": "File"}},
                           {"num_workers": "2"})
            manifest_file_channels(dataset, SECOND, os.path.join(second, "data"))
            failed = self.run_train(second, *once, expect_code=1)
            self.assertIn(f"ValueError: cannot resume from {first['checkpoints']} step 3: the loader's position was saved "
                          f"reading dataset version {dataset.first} but this loader reads {SECOND}", failed)
            self.assertIn(f"Here channel train does not hold versions/{dataset.first}/manifest.json: mount the dataset root or "
                          "that version's ManifestFile channels, or pass --on_dataset_change restart_epoch", failed)
            pinned = self.run_train(first["input"], *once, "--dataset_manifest", dataset.manifest_key(SECOND), expect_code=1)
            self.assertIn(f"Here the job is pinned to {dataset.manifest_key(SECOND)}: pin versions/{dataset.first}/manifest.json "
                          "instead, or pass --on_dataset_change restart_epoch", pinned)
            restarted = self.run_train(second, *once, "--on_dataset_change", "restart_epoch", "--record_log", first["records"])
            self.assertIn(f"saved on dataset version {dataset.first}, this job reads {SECOND}: epoch 0 starts over", restarted)
            self.assertIn("step=3 at record 0 of epoch 0", restarted)
            self.assertEqual(len(set(self.records(first, 0))), packed()["files"])

    def test_restore_loads_the_saved_model_optimizer_and_scaler(self) -> None:
        import train

        with tempfile.TemporaryDirectory() as root:
            job = self.job(root, "restore")
            self.run_train(job["input"], "--checkpoint_dir", job["checkpoints"], "--max_steps", "3", "--validation_channel", "none")
            saved = torch.load(os.path.join(job["checkpoints"], "step-000000003.pt"))
            args = train.parse_args(["--checkpoint_dir", job["checkpoints"], "--input_dir", job["input"]])
            model = train.torchvision.models.resnet18(num_classes=3)
            restored = train.restore(args, Placement(), torch.device("cpu"), model, None)
            trainer = train.Trainer(model, torch.optim.SGD(model.parameters(), lr=1.0, momentum=0.9), torch.device("cpu"), amp=False)
            trainer.load_state_dict(restored["training"])
            state = trainer.state_dict(restored["training"]["epoch"], restored["training"]["step"])
        self.assertEqual(state["model"].keys(), saved["model"].keys())
        for name, tensor in saved["model"].items():
            self.assertTrue(torch.equal(state["model"][name], tensor), name)
        self.assertEqual(state["optimizer"]["param_groups"], saved["optimizer"]["param_groups"])
        for index, entry in saved["optimizer"]["state"].items():
            self.assertTrue(torch.equal(state["optimizer"]["state"][index]["momentum_buffer"], entry["momentum_buffer"]))
        self.assertEqual((state["epoch"], state["step"], state["scaler"]), (0, 3, saved["scaler"]))

    def test_sigterm_saves_a_checkpoint_at_the_step_reached_and_the_next_run_continues_there(self) -> None:
        with tempfile.TemporaryDirectory() as root:
            job = self.job(root, "sigterm")
            command = [sys.executable, os.path.join(CONTAINER, "train.py"), "--input_dir", job["input"],
                       "--model_dir", os.path.join(job["input"], "model"), "--arch", "resnet18", "--image_size", "32",
                       "--batch_size", "4", "--num_classes", "3", "--log_interval", "1", "--epochs", "1",
                       "--checkpoint_interval", "0", "--checkpoint_dir", job["checkpoints"], "--record_log", job["records"],
                       "--validation_channel", "none"]
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            assert process.stdout is not None
            for line in process.stdout:
                if line.startswith("epoch=0 step=3 "):
                    process.terminate()
                    break
            out, err = process.communicate(timeout=600)
            self.assertEqual(process.returncode, 0, out + err)
            self.assertRegex(out, r"stopped by SIGTERM at step=\d+, checkpoint saved")
            step = checkpoint_steps(job["checkpoints"])[-1]
            self.assertEqual(step, len(self.batches(job, 0)))  # the checkpoint is at the last step trained
            saved = torch.load(os.path.join(job["checkpoints"], f"step-{step:09d}.pt"))
            second = self.run_train(job["input"], "--checkpoint_dir", job["checkpoints"], "--record_log", job["records"],
                                    "--epochs", "1", "--validation_channel", "none")
            self.assertIn(f"resumed from {job['checkpoints']} step={step}", second)
            names = self.records(job, 0)
            self.assertEqual(len(names), packed()["files"])
            self.assertEqual(len(set(names)), len(names))
            self.assertEqual(saved["step"], step)


if __name__ == "__main__":
    unittest.main()
