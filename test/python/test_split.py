"""The rank/worker split and the SageMaker configuration it starts from, without shards."""
from __future__ import annotations

import itertools
import json
import os
import random
import tempfile
import unittest
from unittest import mock

from shardio import Placement
from shardio.epoch.split import Consumer, Segment, consumer_of, consumer_share
from shardio.source.environment import hyperparameter, input_channels, placement_from_env
from shardio.epoch.order import BLOCK, canonical_order, interleave, shuffled, split_segments
from shardio.epoch.split import consumed_records
from shardio.epoch.order import Run, consumer_order


def split_records(counts, consumers, slot):
    """Part `slot` of the records of whole shards in shard order (the canonical order's split, on a plain one)."""
    return split_segments([Segment(shard, 0, count) for shard, count in enumerate(counts)], consumers, slot)


class SplitTest(unittest.TestCase):
    def test_record_ranges_cover_every_record_once_and_differ_by_at_most_one(self) -> None:
        for counts in ([8, 7, 7, 8, 7], [0, 5, 0], [100], [1, 1, 1]):
            for consumers in (1, 2, 3, 7, 40):
                with self.subTest(counts=counts, consumers=consumers):
                    parts = [split_records(counts, consumers, slot) for slot in range(consumers)]
                    records = [(s.shard, r) for part in parts for s in part for r in range(s.start, s.stop)]
                    self.assertEqual(sorted(records), [(shard, r) for shard, n in enumerate(counts) for r in range(n)])
                    sizes = [sum(s.stop - s.start for s in part) for part in parts]
                    self.assertLessEqual(max(sizes) - min(sizes), 1)

    def test_a_range_across_a_shard_boundary_is_two_segments(self) -> None:
        self.assertEqual(split_records([8, 7, 7], 2, 0), [Segment(0, 0, 8), Segment(1, 0, 3)])
        self.assertEqual(split_records([8, 7, 7], 2, 1), [Segment(1, 3, 7), Segment(2, 0, 7)])

    def test_without_record_counts_whole_shards_are_dealt_round_robin_from_the_epochs_shard_order(self) -> None:
        for epoch in range(3):
            parts = [consumer_share(None, 5, Consumer(slot, 2), seed=1, epoch=epoch) for slot in range(2)]
            self.assertEqual(sorted(segment.shard for part in parts for segment in part), list(range(5)))
            self.assertEqual([len(part) for part in parts], [3, 2])
            self.assertTrue(all(segment.start == 0 and segment.stop is None for part in parts for segment in part))
        self.assertNotEqual(consumer_share(None, 5, Consumer(0, 2), 1, 0), consumer_share(None, 5, Consumer(0, 2), 1, 1))

    def test_consumers_are_the_jobs_ranks_and_workers_or_with_sharded_by_s3_key_the_hosts(self) -> None:
        placement = Placement(rank=5, world_size=8, local_rank=1, local_world_size=4)
        self.assertEqual(consumer_of(placement, worker=2, workers=3, host_sharded=False), Consumer(17, 24))
        self.assertEqual(consumer_of(placement, worker=2, workers=3, host_sharded=True), Consumer(5, 12))
        self.assertEqual((placement.host_index, placement.host_count), (1, 2))

    def test_a_consumer_outside_its_count_is_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, r"got 3 of 3"):
            Consumer(3, 3)

    def test_the_shuffle_buffer_keeps_every_item_and_is_seeded(self) -> None:
        items = list(range(100))
        first = list(shuffled(items, 10, random.Random(1)))
        self.assertEqual(sorted(first), items)
        self.assertNotEqual(first, items)
        self.assertEqual(first, list(shuffled(items, 10, random.Random(1))))
        self.assertEqual(sorted(shuffled(items[:3], 10, random.Random(1))), items[:3])

    def test_the_shuffle_buffer_hands_out_items_while_it_fills_and_never_holds_more_than_its_size(self) -> None:
        pulled = []

        def source():
            for item in range(5000):
                pulled.append(item)
                yield item

        held = []
        out = []
        for item in shuffled(source(), 1024, random.Random(2)):
            out.append(item)
            held.append(len(pulled) - len(out))
        # The first item leaves after 2 came in, not after the 1,024 of a full buffer (an epoch's start).
        self.assertEqual(held[0], 1)
        self.assertLessEqual(max(held), 1024)
        self.assertEqual(max(held), 1024)
        self.assertEqual(sorted(out), list(range(5000)))


class CanonicalOrderTest(unittest.TestCase):
    COUNTS = [100, 37, 0, 64, 5, 100, 81]

    def test_the_canonical_order_holds_every_record_once_in_whole_blocks_and_changes_per_epoch_only(self) -> None:
        orders = [canonical_order(self.COUNTS, seed=3, epoch=epoch) for epoch in range(3)]
        for blocks in orders:
            records = sorted((b.shard, r) for b in blocks for r in range(b.start, b.stop))
            self.assertEqual(records, [(shard, r) for shard, n in enumerate(self.COUNTS) for r in range(n)])
            self.assertTrue(all(0 < b.stop - b.start <= BLOCK for b in blocks))
            # A shard's blocks lie together (one stream per shard), in a shuffled order.
            shards = [shard for shard, _ in itertools.groupby(b.shard for b in blocks)]
            self.assertEqual(len(shards), len(set(shards)))
        self.assertEqual(orders[0], canonical_order(self.COUNTS, seed=3, epoch=0))
        self.assertNotEqual(orders[0], orders[1])
        self.assertNotEqual([b.shard for b in orders[0]], [b.shard for b in orders[1]])
        self.assertNotEqual(orders[0], canonical_order(self.COUNTS, seed=4, epoch=0))
        first = [b for b in orders[0] if b.shard == 0]
        self.assertNotEqual([b.start for b in first], sorted(b.start for b in first))

    def test_consumer_shares_are_contiguous_ranges_of_it_every_record_once_at_any_count(self) -> None:
        blocks = canonical_order(self.COUNTS, seed=3, epoch=1)
        flat = [(b.shard, r) for b in blocks for r in range(b.start, b.stop)]
        for consumers in (1, 2, 3, 8, 40, 500):
            with self.subTest(consumers=consumers):
                parts = [[(s.shard, r) for s in consumer_share(self.COUNTS, len(self.COUNTS), Consumer(i, consumers), 3, 1)
                          for r in range(s.start, s.stop)] for i in range(consumers)]
                self.assertEqual([record for part in parts for record in part], flat)
                self.assertLessEqual(max(map(len, parts)) - min(map(len, parts)), 1)

    def test_interleave_keeps_every_item_opens_streams_in_order_and_runs_each_readers_end(self) -> None:
        ended, opened = [], []

        def stream(name: int, size: int):
            opened.append(name)
            self.assertLessEqual(len(opened) - len(ended), 3)  # `width` streams open at most
            yield from ((name, i) for i in range(size))
            ended.append(name)

        sizes = [5, 1, 9, 3, 7, 2]
        out = list(interleave([(size, stream(name, size)) for name, size in enumerate(sizes)], random.Random(1), width=3))
        self.assertEqual(sorted(out), sorted((name, i) for name, size in enumerate(sizes) for i in range(size)))
        for name in range(len(sizes)):
            self.assertEqual([i for n, i in out if n == name], list(range(sizes[name])))  # each stream in its order
        self.assertEqual(sorted(ended), list(range(len(sizes))))  # read past its last item: its end checks ran
        self.assertEqual(sorted(opened[:3]), [0, 1, 2])  # the first `width` streams, then each as one ends
        self.assertNotEqual([name for name, _ in out[:9]], sorted(name for name, _ in out[:9]))
        # Unknown sizes: each open stream alike, every item still once.
        unknown = list(interleave([(None, iter(range(10 * k, 10 * k + 4))) for k in range(4)], random.Random(2), width=2))
        self.assertEqual(sorted(unknown), [10 * k + i for k in range(4) for i in range(4)])

    def test_the_records_a_count_stands_for_are_replayed_and_the_rest_split_anew_at_any_count(self) -> None:
        rng = random.Random(11)
        for trial in range(30):
            counts = [rng.randrange(0, 90) for _ in range(rng.randrange(1, 12))]
            total = sum(counts)
            first, second, buffer = rng.randrange(1, 7), rng.randrange(1, 7), rng.choice([0, 4, 64])
            with self.subTest(trial=trial, counts=counts, first=first, second=second, buffer=buffer):
                read = []
                yielded = []
                for index in range(first):
                    share = consumer_share(counts, len(counts), Consumer(index, first), 5, 2)
                    order = list(consumer_order(share, 5, 2, 0, index, first, buffer))
                    taken = rng.randrange(0, len(order) + 1)
                    read += order[:taken]
                    yielded.append(taken)
                resumed = consumed_records(counts, 5, 2, [Run(first, tuple(yielded))], buffer)
                self.assertEqual(sorted(read), sorted((s, p) for s, flags in enumerate(resumed.consumed) for p, f in enumerate(flags) if f))
                rest = [record for index in range(second)
                        for record in consumer_order(consumer_share(counts, len(counts), Consumer(index, second), 5, 2, resumed),
                                                     5, 2, 1, index, second, buffer)]
                self.assertEqual(sorted(read + rest), [(shard, r) for shard, n in enumerate(counts) for r in range(n)])
                self.assertEqual(len(read) + len(rest), total)

    def test_a_count_larger_than_a_consumers_share_is_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, r"consumer 1 of 2 handed out 99 records in epoch 0, but its share holds 10"):
            consumed_records([10, 10], 0, 0, [Run(2, (3, 99))], 0)


class EnvironmentTest(unittest.TestCase):
    def test_placement_from_torchrun_variables_or_one_process(self) -> None:
        self.assertEqual(placement_from_env({"RANK": "5", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "4"}),
                         Placement(5, 8, 1, 4))
        self.assertEqual(placement_from_env({}), Placement(0, 1, 0, 1))

    def test_channels_from_inputdataconfig(self) -> None:
        with tempfile.TemporaryDirectory() as input_dir:
            write_json(input_dir, "inputdataconfig.json", {
                "train": {"TrainingInputMode": "Pipe", "S3DistributionType": "ShardedByS3Key", "RecordWrapperType": "None",
                          "ShuffleConfig": {"Seed": 42}},
                "index": {"TrainingInputMode": "File", "S3DistributionType": "FullyReplicated"},
            })
            channels = input_channels(input_dir)
        self.assertEqual((channels["train"].input_mode, channels["train"].host_sharded, channels["train"].shuffled),
                         ("Pipe", True, True))
        self.assertEqual((channels["index"].input_mode, channels["index"].host_sharded, channels["index"].shuffled),
                         ("File", False, False))

    def test_a_hyperparameter_comes_from_the_toolkits_variable_then_the_config_file(self) -> None:
        with tempfile.TemporaryDirectory() as input_dir:
            self.assertEqual(hyperparameter("num_workers", "3", input_dir), "3")
            write_json(input_dir, "hyperparameters.json", {"num_workers": "11", "epochs": 2})
            self.assertEqual(hyperparameter("num_workers", None, input_dir), "11")
            self.assertEqual(hyperparameter("epochs", None, input_dir), "2")
            with mock.patch.dict(os.environ, {"SM_HP_NUM_WORKERS": "7"}):
                self.assertEqual(hyperparameter("num_workers", None, input_dir), "7")


def write_json(input_dir: str, name: str, content: dict) -> None:
    os.makedirs(os.path.join(input_dir, "config"), exist_ok=True)
    with open(os.path.join(input_dir, "config", name), "w", encoding="utf-8") as handle:
        json.dump(content, handle)


if __name__ == "__main__":
    unittest.main()
