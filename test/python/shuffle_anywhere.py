"""The shuffle's quality and elastic resumption, on a packed folder of 2,000 images and the same
dataset under an S3 prefix of the local S3 test server (batch 64):

- epochs 0 and 1 share at most 8 of their first 64 records;
- pairs batched together in epoch 0 are batched together again in epoch 1 at most 1.5 × as often as
  under a uniform shuffle (that rate computed here from seeded random permutations);
- two passes without set_epoch differ, and set_epoch on the loader or its dataset picks an epoch;
- a position saved with 2 workers resumes with 3, with 1 rank resumes with 2 (and 2 ranks with 1),
  every record of the epoch once across the two runs.

Run by test/container/readers-anywhere.test.ts, which packs the 2,000 images (SHARDIO_TEST_PACKED's
`shuffle`, `shuffleFiles`) and starts the S3 server (SHARDIO_TEST_S3, as for reading_anywhere.py).
The file's name keeps it out of container-python.test.ts's discovery (test*.py): it needs the server.
"""
from __future__ import annotations

import itertools
import os
import random
import shutil
import sys
import tempfile
import unittest
from typing import List, Sequence, Set, Tuple

from shardio import Placement
from reading_anywhere import S3, needs_s3, upload
from support import needs_packed, needs_torch, packed

from shardio.torch.dataset import data_loader

BATCH = 64


def file_name(record) -> str:
    return record.filename


def keep(batch):
    return batch


def batches_of(loader) -> List[List[str]]:
    return [list(batch) for batch in loader]


def batch_pairs(batches: Sequence[Sequence[str]]) -> Set[Tuple[str, str]]:
    return {pair for batch in batches for pair in itertools.combinations(sorted(batch), 2)}


def repeat_rate(first: Sequence[Sequence[str]], second: Sequence[Sequence[str]]) -> float:
    """The share of the pairs batched together in `first` that are batched together in `second`."""
    pairs = batch_pairs(first)
    return len(pairs & batch_pairs(second)) / len(pairs)


def uniform_repeat_rate(names: Sequence[str], seeds: int = 4) -> float:
    """The same rate for two independent uniform permutations (seeded), averaged over `seeds` pairs."""
    rates = []
    for seed in range(seeds):
        rng = random.Random(seed)
        epochs = []
        for _ in range(2):
            order = list(names)
            rng.shuffle(order)
            epochs.append([order[i:i + BATCH] for i in range(0, len(order), BATCH)])
        rates.append(repeat_rate(*epochs))
    return sum(rates) / len(rates)


@needs_torch
@needs_packed
@needs_s3
class ShuffleAnywhereTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.work = tempfile.mkdtemp(prefix="shardio-shuffle-")
        cls.root = str(packed()["shuffle"])
        cls.files = int(packed()["shuffleFiles"])  # type: ignore[arg-type]
        os.environ.update({"AWS_ACCESS_KEY_ID": str(S3["accessKeyId"]), "AWS_SECRET_ACCESS_KEY": str(S3["secretAccessKey"]),
                           "AWS_DEFAULT_REGION": str(S3["region"]), "AWS_ENDPOINT_URL": str(S3["endpoint"])})
        os.environ.pop("AWS_ENDPOINT_URL_S3", None)
        cls.locations = {"folder": cls.root, "s3": upload(cls.root)}

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.work, ignore_errors=True)

    def loader(self, location: str, workers: int = 0, placement: Placement = Placement(), **options):
        return data_loader(location, BATCH, transform=file_name, collate_fn=keep, num_workers=workers, placement=placement,
                           seed=7, cache_dir=tempfile.mkdtemp(dir=self.work), **options)

    def test_epochs_open_on_different_records_and_batch_mates_repeat_about_as_under_a_uniform_shuffle(self) -> None:
        for kind, location in self.locations.items():
            for workers in (0, 2):
                with self.subTest(source=kind, workers=workers):
                    loader = self.loader(location, workers)
                    epochs = [batches_of(loader) for _ in range(2)]  # the loader counts the epochs
                    names = [name for batch in epochs[0] for name in batch]
                    self.assertEqual(len(names), self.files)
                    self.assertEqual(len(set(names)), self.files)
                    overlap = len(set(epochs[0][0]) & set(epochs[1][0]))  # the first batch: the first 64 records
                    rate, uniform = repeat_rate(*epochs), uniform_repeat_rate(names)
                    print(f"\n{kind} workers={workers}: first {BATCH} of epochs 0 and 1 share {overlap}; batch-mates "
                          f"repeat {rate:.4f}, uniform {uniform:.4f} ({rate / uniform:.2f}x)", file=sys.stderr)
                    self.assertLessEqual(overlap, 8)
                    self.assertLessEqual(rate, 1.5 * uniform)

    def test_each_pass_is_the_next_epoch_unless_set_epoch_on_the_loader_or_its_dataset_says_otherwise(self) -> None:
        for kind, location in self.locations.items():
            for resumable in (False, True):
                with self.subTest(source=kind, resumable=resumable):
                    loader = self.loader(location, 2, resumable=resumable)
                    passes = [batches_of(loader) for _ in range(2)]
                    self.assertNotEqual(passes[0], passes[1])
                    self.assertEqual(loader.dataset.epoch, 1)
                    loader.set_epoch(0)
                    self.assertEqual(batches_of(loader), passes[0])
                    loader.dataset.set_epoch(1)
                    self.assertEqual(batches_of(loader), passes[1])
                    self.assertEqual(self.loader(location, 2, resumable=resumable).dataset.epoch, 0)

    def test_a_position_saved_at_one_worker_or_rank_count_resumes_at_another_with_every_record_once(self) -> None:
        # (saved at: ranks, workers), (resumed at: ranks, workers), batches each saving rank reads first
        cases = [((1, 2), (1, 3), 5), ((1, 0), (2, 1), 7), ((2, 2), (1, 0), 3), ((1, 3), (3, 2), 1)]
        for kind, location in self.locations.items():
            for (ranks, workers), (new_ranks, new_workers), stop in cases:
                with self.subTest(source=kind, saved=(ranks, workers), resumed=(new_ranks, new_workers)):
                    seen, positions = self.read_part(location, ranks, workers, stop, epoch=3)
                    rest: List[str] = []
                    for rank in range(new_ranks):
                        resumed = self.loader(location, new_workers, Placement(rank, new_ranks, rank, new_ranks), resumable=True)
                        resumed.load_state_dict(positions if ranks > 1 else positions[0])
                        rest += [name for batch in batches_of(resumed) for name in batch]
                    self.assertEqual(len(seen), ranks * stop * BATCH)
                    self.assertEqual(sorted(seen + rest), sorted(self.all_names()))

    def test_a_resumed_epoch_saved_again_at_a_third_count_still_reads_every_record_once(self) -> None:
        location = self.locations["folder"]
        seen, positions = self.read_part(location, 1, 2, 4, epoch=1)
        middle = self.loader(location, 3, resumable=True)
        middle.load_state_dict(positions[0])
        for index, batch in enumerate(middle):
            seen += batch
            if index == 5:
                break
        saved = middle.state_dict()
        self.assertEqual(saved["sample_in_epoch"], len(seen))
        last = self.loader(location, 1, resumable=True)
        last.load_state_dict(saved)
        rest = [name for batch in batches_of(last) for name in batch]
        self.assertEqual(sorted(seen + rest), sorted(self.all_names()))

    def test_another_count_without_every_ranks_position_is_refused_naming_the_missing_ranks(self) -> None:
        _seen, positions = self.read_part(self.locations["folder"], 2, 1, 2, epoch=0)
        with self.assertRaisesRegex(ValueError, r"saved at 2 rank\(s\) × 1 worker\(s\), this loader has 1 × 2: .*"
                                                r"rank\(s\) \[0\] are missing"):
            self.loader(self.locations["folder"], 2, resumable=True).load_state_dict(positions[1])

    def read_part(self, location: str, ranks: int, workers: int, stop: int, epoch: int) -> Tuple[List[str], List[dict]]:
        """Every rank of a job at (ranks, workers) reads `stop` batches of `epoch`; their names and positions."""
        seen: List[str] = []
        positions = []
        for rank in range(ranks):
            first = self.loader(location, workers, Placement(rank, ranks, rank, ranks), resumable=True)
            first.set_epoch(epoch)
            for index, batch in enumerate(first):
                seen += batch
                if index + 1 == stop:
                    break
            positions.append(first.state_dict())
        return seen, positions

    def all_names(self) -> List[str]:
        return [name for batch in batches_of(self.loader(self.locations["folder"])) for name in batch]


if __name__ == "__main__":
    unittest.main()
