"""Pipe mode on real FIFOs: SageMaker's `<channel>_<epoch>` read to the end in order, the wait for
the next epoch's FIFO, and the fan-out that deals records to several consumers and hosts."""
from __future__ import annotations

import json
import os
import tempfile
import threading
import time
import unittest
from typing import Dict, List

from shardio import (
    FormatError, ImageRecord, PipeChannel, PipeFanOut, PipeSource, Placement, ShardDirectory, consumer_images, open_channel,
    pipe_path,
)
from shardio.pipe import consumer_channel
from support import needs_packed, packed


def feed(path: str, data: bytes, delay: float = 0.0) -> threading.Thread:
    """Plays SageMaker: after `delay`, makes the FIFO and writes `data` into it (blocks until a reader opens it)."""

    def run() -> None:
        time.sleep(delay)
        os.mkfifo(path)
        with open(path, "wb") as fifo:
            fifo.write(data)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def concatenated_shards(dataset: str) -> bytes:
    """The bytes Pipe mode streams for the shards/ prefix: every object, one after the other."""
    data = b""
    for shard in ShardDirectory(dataset).shards:
        with open(shard.path, "rb") as handle:
            data += handle.read()
    return data


def in_file_order(dataset: str) -> List[ImageRecord]:
    directory = ShardDirectory(dataset)
    return [directory.image(r, s) for s in range(len(directory.shards)) for r in directory.read(s)]


def collect(results: Dict[int, List[ImageRecord]], consumer: int, records) -> threading.Thread:
    thread = threading.Thread(target=lambda: results.__setitem__(consumer, list(records)), daemon=True)
    thread.start()
    return thread


@needs_packed
class PipeChannelTest(unittest.TestCase):
    def test_reads_each_epochs_fifo_to_its_end_waiting_for_the_next_one(self) -> None:
        for name in ("tfrecord", "recordio"):
            dataset = packed()[name]
            data = concatenated_shards(dataset)
            with self.subTest(format=name), tempfile.TemporaryDirectory() as data_dir:
                writers = [feed(pipe_path(data_dir, "train", 0), data), feed(pipe_path(data_dir, "train", 1), data, delay=0.3)]
                channel = PipeChannel(data_dir, "train", timeout=10)
                self.assertEqual(list(channel.images(0)), in_file_order(dataset))
                self.assertEqual(list(channel.images(1)), in_file_order(dataset))
                for writer in writers:
                    writer.join()

    def test_an_epoch_whose_fifo_never_comes_times_out_and_points_at_set_epoch(self) -> None:
        with tempfile.TemporaryDirectory() as data_dir:
            with self.assertRaisesRegex(TimeoutError, r"train_3 did not appear within 0 s: .* call set_epoch\(\)"):
                list(PipeChannel(data_dir, "train", timeout=0.1).images(3))

    def test_an_empty_stream_has_no_records(self) -> None:
        with tempfile.TemporaryDirectory() as data_dir:
            feed(pipe_path(data_dir, "train", 0), b"")
            self.assertEqual(list(PipeChannel(data_dir, "train", timeout=10).images(0)), [])


@needs_packed
class PipeFanOutTest(unittest.TestCase):
    def test_deals_every_record_once_over_the_consumers_of_every_host_for_each_epoch(self) -> None:
        dataset = packed()["recordio"]
        data = concatenated_shards(dataset)
        expected = in_file_order(dataset)
        consumers, hosts, epochs = 3, 2, 2
        with tempfile.TemporaryDirectory() as root:
            fanouts, dirs = [], []
            for host in range(hosts):
                # FullyReplicated: every host streams the same objects and keeps its share.
                data_dir, fanout_dir = os.path.join(root, f"data-{host}"), os.path.join(root, f"fanout-{host}")
                os.makedirs(data_dir)
                for epoch in range(epochs):
                    feed(pipe_path(data_dir, "train", epoch), data, delay=0.2 * epoch)
                fanouts.append(PipeFanOut(data_dir, "train", fanout_dir, consumers, group_index=host, group_count=hosts,
                                          timeout=10, epochs=epochs).start())
                dirs.append(fanout_dir)
            for epoch in range(epochs):
                results: Dict[int, List[ImageRecord]] = {}
                threads = [collect(results, host * consumers + c,
                                   PipeChannel(dirs[host], consumer_channel("train", c), timeout=10).images(epoch))
                           for host in range(hosts) for c in range(consumers)]
                for thread in threads:
                    thread.join(20)
                for slot in range(consumers * hosts):
                    self.assertEqual(results[slot], expected[slot::consumers * hosts], f"epoch {epoch} slot {slot}")
            for fanout in fanouts:
                fanout.join(10)
            self.assertEqual(os.listdir(dirs[0]), [])


@needs_packed
class PipeModeChannelTest(unittest.TestCase):
    def test_open_channel_starts_the_fan_out_on_local_rank_0_and_every_rank_and_worker_gets_a_disjoint_part(self) -> None:
        dataset = packed()["tfrecord"]
        data = concatenated_shards(dataset)
        expected = {image.filename for image in in_file_order(dataset)}
        with tempfile.TemporaryDirectory() as input_dir:
            write_config(input_dir, {"train": {"TrainingInputMode": "Pipe", "S3DistributionType": "ShardedByS3Key",
                                               "RecordWrapperType": "None"}})
            data_dir = os.path.join(input_dir, "data")
            os.makedirs(data_dir)
            feed(pipe_path(data_dir, "train", 0), data)
            local_ranks, workers = 2, 2
            placements = [Placement(rank=r, world_size=local_ranks, local_rank=r, local_world_size=local_ranks)
                          for r in range(local_ranks)]
            sources = [open_channel("train", p, workers, input_dir=input_dir, pipe_timeout=10) for p in placements]
            self.assertTrue(all(isinstance(s, PipeSource) for s in sources))
            results: Dict[int, List[ImageRecord]] = {}
            threads = [collect(results, r * workers + w, consumer_images(sources[r], placements[r], 0, seed=1,
                                                                        shuffle_buffer=4, worker=w, workers=workers))
                       for r in range(local_ranks) for w in range(workers)]
            for thread in threads:
                thread.join(20)
            filenames = [image.filename for part in results.values() for image in part]
            self.assertEqual(len(results), local_ranks * workers)
            self.assertEqual(len(filenames), len(expected))
            self.assertEqual(set(filenames), expected)

    def test_a_consumer_count_other_than_the_one_the_channel_was_opened_for_is_refused(self) -> None:
        source = PipeSource("/nowhere", "train", local_consumers=2, host_sharded=True, host_count=1, fanout_dir="/nowhere")
        with self.assertRaisesRegex(ValueError, r"read by 4 consumers but opened for 2"):
            list(consumer_images(source, Placement(world_size=2, local_world_size=2), 0, worker=0, workers=2))

    def test_refuses_record_wrapping_and_a_shuffled_replicated_stream_over_several_hosts(self) -> None:
        with tempfile.TemporaryDirectory() as input_dir:
            write_config(input_dir, {
                "wrapped": {"TrainingInputMode": "Pipe", "RecordWrapperType": "RecordIO"},
                "shuffled": {"TrainingInputMode": "Pipe", "S3DistributionType": "FullyReplicated", "ShuffleConfig": {"Seed": 1}},
            })
            with self.assertRaisesRegex(FormatError, r"channel wrapped: RecordWrapperType RecordIO wraps every shard"):
                open_channel("wrapped", Placement(), 0, input_dir=input_dir)
            with self.assertRaisesRegex(ValueError, r"channel shuffled: a FullyReplicated Pipe channel with a ShuffleConfig"):
                open_channel("shuffled", Placement(rank=0, world_size=2, local_rank=0, local_world_size=1), 0, input_dir=input_dir)


def write_config(input_dir: str, channels: dict) -> None:
    os.makedirs(os.path.join(input_dir, "config"))
    with open(os.path.join(input_dir, "config", "inputdataconfig.json"), "w", encoding="utf-8") as handle:
        json.dump(channels, handle)


if __name__ == "__main__":
    unittest.main()
