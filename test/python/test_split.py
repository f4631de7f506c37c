"""The rank/worker split and the SageMaker configuration it starts from, without shards."""
from __future__ import annotations

import json
import os
import random
import tempfile
import unittest
from unittest import mock

from shardio import Consumer, Placement, Segment, consumer_of, consumer_share, hyperparameter, input_channels, placement_from_env
from shardio import shuffled, split_segments


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
