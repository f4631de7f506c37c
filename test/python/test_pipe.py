"""Pipe mode on real FIFOs: SageMaker's `<channel>_<epoch>` read to the end in order, the wait for
the next epoch's FIFO, and the fan-out that deals records to several consumers and hosts."""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import struct
import tempfile
import threading
import time
import unittest
from unittest import mock
from typing import Callable, Dict, List, Optional

from shardio import FormatError, Placement
from shardio.catalog.manifest import read_manifest
from shardio.epoch.stream import consumer_images
from shardio.format.records import ImageRecord
from shardio.format.tfrecord import read_tfrecords
from shardio.pipe_mode.pipe import FanOutError, PipeChannel, PipeFanOut, PipeSource, pipe_path
from shardio.source.channels import open_channel
from shardio.source.directory import ShardDirectory
from shardio.catalog.manifest import DatasetManifest
from shardio.pipe_mode.pipe import COPY, SPLICE, consumer_channel
from shardio.pipe_mode.pipe_check import ShardSums
from shardio.pipe_mode.pipe_splice import splice_available
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
    return b"".join(read_bytes(shard.path) for shard in ShardDirectory(dataset).shards)


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


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
            for sums in (None, all_sums(dataset)):  # read as it comes, or each shard checked whole first
                with self.subTest(format=name, checked_whole=sums is not None), tempfile.TemporaryDirectory() as data_dir:
                    writers = [feed(pipe_path(data_dir, "train", 0), data), feed(pipe_path(data_dir, "train", 1), data, delay=0.3)]
                    channel = PipeChannel(data_dir, "train", timeout=10, sums=sums)
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


PATHS = (SPLICE, COPY) if splice_available() else (COPY,)


def dataset_manifest(dataset: str) -> DatasetManifest:
    return read_manifest(os.path.join(dataset, "manifest.json"))


def all_sums(dataset: str) -> ShardSums:
    """The dataset's shard sums, whatever this machine's crc32c module (whole_shard_sums leaves native TFRecord checks to the consumers)."""
    listed = dataset_manifest(dataset)
    by_size: Dict[int, Dict[int, str]] = {}
    for shard in listed.shards:
        by_size.setdefault(shard.bytes, {})[shard.crc32] = shard.key  # type: ignore[index]
    return ShardSums(listed.path, listed.format, by_size, sorted(by_size))


def fan_out_once(data: bytes, consumers: int, **options) -> List[object]:
    """One epoch of `data` through a fan-out into `consumers` consumers; what each got (its records, or what it raised)."""
    with tempfile.TemporaryDirectory() as root:
        data_dir, fanout_dir = os.path.join(root, "data"), os.path.join(root, "fanout")
        os.makedirs(data_dir)
        feed(pipe_path(data_dir, "train", 0), data)
        fanout = PipeFanOut(data_dir, "train", fanout_dir, consumers, timeout=10, epochs=1, **options).start()
        results: Dict[int, object] = {}

        def consume(consumer: int) -> None:
            channel = PipeChannel(fanout_dir, consumer_channel("train", consumer), timeout=10, relayed=True)
            results[consumer] = list(channel.images(0))

        errors = outcomes(*(lambda c=c: consume(c) for c in range(consumers)))
        try:
            fanout.join(10)
        except (FormatError, OSError):
            pass
        return [error if error is not None else results[c] for c, error in enumerate(errors)]


@needs_packed
class PipeFanOutTest(unittest.TestCase):
    def test_deals_every_record_once_over_the_consumers_of_every_host_for_each_epoch_on_either_path(self) -> None:
        for path, name in ((path, name) for path in PATHS for name in ("tfrecord", "recordio")):
            with self.subTest(path=path, format=name):
                self.deal_every_record_once(packed()[name], path)  # type: ignore[arg-type]

    def deal_every_record_once(self, dataset: str, path: str) -> None:
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
                                          timeout=10, epochs=epochs, path=path, listed=dataset_manifest(dataset)).start())
                dirs.append(fanout_dir)
            for epoch in range(epochs):
                results: Dict[int, List[ImageRecord]] = {}
                threads = [collect(results, host * consumers + c,
                                   PipeChannel(dirs[host], consumer_channel("train", c), timeout=10, relayed=True).images(epoch))
                           for host in range(hosts) for c in range(consumers)]
                for thread in threads:
                    thread.join(20)
                for slot in range(consumers * hosts):
                    self.assertEqual(results[slot], expected[slot::consumers * hosts], f"epoch {epoch} slot {slot}")
            for fanout in fanouts:
                fanout.join(10)
            self.assertEqual(os.listdir(dirs[0]), [])

    def test_the_copy_path_finds_each_shard_by_its_size_and_crc32_in_any_order_and_deals_all_of_them(self) -> None:
        for name in ("tfrecord", "recordio"):
            dataset = str(packed()[name])
            shards = ShardDirectory(dataset).shards
            reordered = b"".join(read_bytes(shard.path) for shard in reversed(shards))  # as a ShuffleConfig may stream them
            expected = [ShardDirectory(dataset).image(r, s) for s in reversed(range(len(shards))) for r in ShardDirectory(dataset).read(s)]
            with self.subTest(format=name):
                got = fan_out_once(reordered, 2, sums=all_sums(dataset), path=COPY)
                self.assertEqual(got, [expected[0::2], expected[1::2]])

    def test_the_splice_path_cannot_be_asked_to_check_shards_it_does_not_see(self) -> None:
        with self.assertRaisesRegex(ValueError, r"fan-out path 'splice': allowed are 'splice' \(Linux, shards not checked whole"):
            PipeFanOut("/nowhere", "train", "/nowhere", 2, sums=all_sums(str(packed()["recordio"])), path=SPLICE)


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


def outcomes(*calls: Callable[[], object], wait: float = 30) -> List[Optional[BaseException]]:
    """Runs the calls at once (the consumers of a fan-out must), each in a thread, and returns what
    each raised (None when it returned). One still waiting after `wait` seconds fails the test:
    the faults these tests inject used to block forever."""
    results: Dict[int, Optional[BaseException]] = {}

    def run(number: int, call: Callable[[], object]) -> None:
        try:
            call()
            results[number] = None
        except BaseException as error:  # noqa: BLE001 - what the test checks
            results[number] = error

    threads = [threading.Thread(target=run, args=(number, call), daemon=True) for number, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(wait)
    waiting = [number for number, thread in enumerate(threads) if thread.is_alive()]
    if waiting:
        raise AssertionError(f"calls {waiting} still wait after {wait} s")
    return [results[number] for number in range(len(calls))]


@needs_packed
class PipeFailureTest(unittest.TestCase):
    """Pipe-mode faults: every wait times out naming what it waited for, the fan-out's errors reach
    every consumer at once, and no epoch ends quietly with part of its records."""

    def setUp(self) -> None:
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.data_dir, self.fanout_dir = os.path.join(folder.name, "data"), os.path.join(folder.name, "fanout")
        os.makedirs(self.data_dir)

    def consumer(self, consumer: int, epoch: int) -> Callable[[], object]:
        return lambda: list(PipeChannel(self.fanout_dir, consumer_channel("train", consumer), timeout=10, relayed=True).images(epoch))

    def test_a_fifo_that_no_writer_opens_times_out_naming_it(self) -> None:
        os.mkfifo(pipe_path(self.data_dir, "train", 0))
        [error] = outcomes(lambda: list(PipeChannel(self.data_dir, "train", timeout=1).images(0)))
        self.assertIsInstance(error, TimeoutError)
        self.assertEqual(str(error), f"Pipe-mode FIFO {self.data_dir}/train_0: no writer opened it and sent data within 1 s")

    def test_a_writer_that_stops_sending_times_out_naming_the_fifo_and_the_offset(self) -> None:
        path = pipe_path(self.data_dir, "train", 0)
        os.mkfifo(path)
        release = threading.Event()

        def stall() -> None:
            with open(path, "wb") as fifo:
                fifo.write(concatenated_shards(packed()["tfrecord"])[:1000])  # type: ignore[arg-type]
                fifo.flush()
                release.wait(60)

        threading.Thread(target=stall, daemon=True).start()
        [error] = outcomes(lambda: list(PipeChannel(self.data_dir, "train", timeout=1).images(0)))
        release.set()
        self.assertIsInstance(error, TimeoutError)
        self.assertEqual(str(error), f"Pipe-mode FIFO {path}: no data came after offset 1000 within 1 s")

    def test_a_corrupt_stream_raises_in_every_consumer_of_the_fan_out_in_that_epoch_and_the_next(self) -> None:
        data = bytearray(concatenated_shards(packed()["tfrecord"]))  # type: ignore[arg-type]
        offset = [record.offset for record in read_tfrecords(io.BytesIO(bytes(data)), "stream")][10]
        data[offset:offset + 8] = struct.pack("<Q", 1 << 40)
        cause = (f"channel train epoch 0: FormatError: {self.data_dir}/train_0: TFRecord length {1 << 40} at offset {offset} "
                 "is more than a record may hold")
        for path in PATHS:
            shutil.rmtree(self.data_dir)
            os.makedirs(self.data_dir)
            feed(pipe_path(self.data_dir, "train", 0), bytes(data))
            fanout = PipeFanOut(self.data_dir, "train", self.fanout_dir, 2, timeout=10, epochs=2, path=path).start()
            for epoch in (0, 1):  # the next epoch does not wait for a fan-out that has stopped
                for consumer, error in enumerate(outcomes(self.consumer(0, epoch), self.consumer(1, epoch))):
                    with self.subTest(path=path, epoch=epoch, consumer=consumer):
                        self.assertIsInstance(error, FanOutError)
                        self.assertIn(f"the Pipe-mode fan-out into {self.fanout_dir} failed: {cause}", str(error))
            with self.assertRaisesRegex(FormatError, f"at offset {offset}"):
                fanout.join(10)

    def test_a_flipped_byte_in_a_shard_is_refused_naming_it_before_its_records_are_used(self) -> None:
        for name in ("tfrecord", "recordio"):
            dataset = str(packed()[name])
            shards = ShardDirectory(dataset).shards
            listed = dataset_manifest(dataset)
            data = bytearray(concatenated_shards(dataset))
            flipped = sum(os.path.getsize(shard.path) for shard in shards[:2]) + os.path.getsize(shards[2].path) // 2
            data[flipped] ^= 0x10
            refused = (f"the bytes from offset {flipped - os.path.getsize(shards[2].path) // 2} match no shard that {listed.path} "
                       f"lists by size and CRC-32: a shard changed after packing: ")
            # Among the shards of its size (another may have the same) at a record's end.
            named = f"{listed.shards[2].key} lists {listed.shards[2].bytes} bytes of CRC-32 {listed.shards[2].crc32:#010x}"
            with self.subTest(format=name, reader="the fan-out, for every consumer"):
                for got in fan_out_once(bytes(data), 3, sums=all_sums(dataset)):
                    self.assertIsInstance(got, FanOutError)
                    self.assertIn(refused, str(got))
                    self.assertIn(named, str(got))
            with self.subTest(format=name, reader="one consumer reading SageMaker's FIFO"), \
                    tempfile.TemporaryDirectory() as data_dir:
                feed(pipe_path(data_dir, "train", 0), bytes(data))
                channel = PipeChannel(data_dir, "train", timeout=10, sums=all_sums(dataset))
                with self.assertRaisesRegex(FormatError, f"{re.escape(refused)}.*{re.escape(named)}"):
                    list(channel.images(0))

    def test_a_corrupt_record_header_in_a_shard_checked_whole_is_refused_before_its_records_are_dealt(self) -> None:
        dataset = str(packed()["recordio"])
        shards = ShardDirectory(dataset).shards
        start = os.path.getsize(shards[0].path)
        data = bytearray(concatenated_shards(dataset))
        data[start] ^= 0xFF  # the magic word of the second shard's first record
        for got in fan_out_once(bytes(data), 2, sums=all_sums(dataset)):
            self.assertIsInstance(got, FanOutError)
            self.assertRegex(str(got), rf"the bytes from offset {start} match no shard that .* lists by size and CRC-32: \d+ bytes "
                                       r"with no listed shard's size at a record's end \(a corrupt record header")

    def test_a_flipped_byte_in_a_tfrecord_dealt_by_splice_is_refused_by_the_consumer_that_gets_it(self) -> None:
        if SPLICE not in PATHS:
            self.skipTest("os.splice: Linux only")
        data = bytearray(concatenated_shards(packed()["tfrecord"]))  # type: ignore[arg-type]
        record = list(read_tfrecords(io.BytesIO(bytes(data)), "stream"))[2]  # consumer 0's second record
        data[record.offset + record.size // 2] ^= 0x01
        first = fan_out_once(bytes(data), 2, path=SPLICE)[0]
        # The host never sees the bytes it splices: the consumer checks the record's CRC-32C (check_crc).
        self.assertIsInstance(first, FormatError)
        self.assertRegex(str(first), r"train-0_0: record 1 at offset \d+: its \d+ bytes do not match their CRC-32C")

    def test_a_stream_that_stalls_times_out_in_the_fan_out_on_either_path_and_every_consumer_is_told(self) -> None:
        for path in PATHS:
            shutil.rmtree(self.data_dir)
            os.makedirs(self.data_dir)
            source = pipe_path(self.data_dir, "train", 0)
            os.mkfifo(source)
            release = threading.Event()

            def stall() -> None:
                with open(source, "wb") as fifo:
                    fifo.write(concatenated_shards(packed()["recordio"])[:5000])  # type: ignore[arg-type]
                    fifo.flush()
                    release.wait(60)

            threading.Thread(target=stall, daemon=True).start()
            PipeFanOut(self.data_dir, "train", self.fanout_dir, 2, timeout=1, epochs=1, path=path).start()
            errors = outcomes(self.consumer(0, 0), self.consumer(1, 0))
            release.set()
            for consumer, error in enumerate(errors):
                with self.subTest(path=path, consumer=consumer):
                    self.assertIsInstance(error, FanOutError)
                    self.assertIn(f"TimeoutError: Pipe-mode FIFO {source}: no data came after offset 5000 within 1 s", str(error))

    def test_a_consumer_that_never_opens_its_fifo_stops_the_fan_out_and_the_others_are_told(self) -> None:
        feed(pipe_path(self.data_dir, "train", 0), concatenated_shards(packed()["tfrecord"]))  # type: ignore[arg-type]
        fanout = PipeFanOut(self.data_dir, "train", self.fanout_dir, 2, timeout=1, epochs=1).start()
        [error] = outcomes(self.consumer(0, 0))
        self.assertIsInstance(error, FanOutError)
        self.assertIn(f"channel train epoch 0: TimeoutError: fan-out FIFO {self.fanout_dir}/train-1_0: its consumer did not "
                      "open it within 1 s of the first one", str(error))

    def test_an_epoch_that_streams_fewer_records_than_the_manifest_lists_is_an_error_not_a_shorter_epoch(self) -> None:
        dataset = str(packed()["recordio"])
        listed = read_manifest(os.path.join(dataset, "manifest.json"))
        shards = ShardDirectory(dataset).shards
        short = b"".join(read_bytes(shard.path) for shard in shards[:-1])
        streamed = listed.records - listed.shards[-1].records
        with self.subTest(reader="one consumer reads SageMaker's FIFO"):
            feed(pipe_path(self.data_dir, "train", 0), short)
            [error] = outcomes(lambda: list(PipeChannel(self.data_dir, "train", timeout=10, listed=listed).images(0)))
            self.assertIsInstance(error, FormatError)
            self.assertEqual(str(error), f"{self.data_dir}/train_0: epoch 0 streamed {streamed} records but {listed.path} "
                                         f"lists {listed.records}; an epoch is never read in part")
        with self.subTest(reader="open_channel: two workers behind the fan-out, the manifest in the index channel"), \
                tempfile.TemporaryDirectory() as input_dir:
            write_config(input_dir, {"counted": {"TrainingInputMode": "Pipe"}, "index": {"TrainingInputMode": "File"}})
            data_dir = os.path.join(input_dir, "data")
            index_manifest = os.path.join(data_dir, "index", "manifest.json")
            os.makedirs(os.path.dirname(index_manifest))
            shutil.copyfile(listed.path, index_manifest)
            feed(pipe_path(data_dir, "counted", 0), short)
            source = open_channel("counted", Placement(), 2, index_channel="index", input_dir=input_dir, pipe_timeout=10)
            self.assertEqual(source.dataset_version, listed.dataset_version)
            errors = outcomes(*(lambda worker=worker: list(consumer_images(source, Placement(), 0, worker=worker, workers=2))
                                for worker in range(2)))
            for error in errors:
                self.assertIsInstance(error, FanOutError)
                self.assertIn(f"channel counted epoch 0: FormatError: {data_dir}/counted_0: epoch 0 streamed {streamed} records "
                              f"but {index_manifest} lists {listed.records}; an epoch is never read in part", str(error))


    def test_open_channel_checks_shards_whole_against_the_manifests_crc32_and_refuses_a_flipped_byte(self) -> None:
        # RecordIO always; TFRecord where no fast CRC-32C is installed (as here: NATIVE False), its records' own CRCs
        # then left alone, none computed in pure Python.
        for name in ("recordio", "tfrecord"):
            with self.subTest(format=name), mock.patch("shardio.pipe_mode.pipe_check.NATIVE", False), \
                    mock.patch("shardio.format.tfrecord.masked_crc32c", side_effect=AssertionError("a record's CRC-32C computed")):
                self.refuse_a_flipped_byte_through_open_channel(str(packed()[name]))

    def refuse_a_flipped_byte_through_open_channel(self, dataset: str) -> None:
        listed = dataset_manifest(dataset)
        data = bytearray(concatenated_shards(dataset))
        data[len(data) - 100] ^= 0x01  # in the last shard's last record
        for workers in (0, 2):  # one consumer reads SageMaker's FIFO itself; two read the fan-out's
            with self.subTest(workers=workers), tempfile.TemporaryDirectory() as input_dir:
                write_config(input_dir, {"checked": {"TrainingInputMode": "Pipe"}, "index": {"TrainingInputMode": "File"}})
                data_dir = os.path.join(input_dir, "data")
                os.makedirs(os.path.join(data_dir, "index"))
                shutil.copyfile(listed.path, os.path.join(data_dir, "index", "manifest.json"))
                feed(pipe_path(data_dir, "checked", 0), bytes(data))
                source = open_channel("checked", Placement(), workers, index_channel="index", input_dir=input_dir, pipe_timeout=10)
                errors = outcomes(*(lambda worker=worker: list(consumer_images(source, Placement(), 0, worker=worker,
                                                                               workers=max(1, workers)))
                                    for worker in range(max(1, workers))))
                for error in errors:
                    self.assertIsInstance(error, FanOutError if workers else FormatError)
                    # Named among the shards of its size (another may have the same).
                    self.assertRegex(str(error), f"a shard changed after packing: .*{re.escape(listed.shards[-1].key)} lists")


def write_config(input_dir: str, channels: dict) -> None:
    os.makedirs(os.path.join(input_dir, "config"))
    with open(os.path.join(input_dir, "config", "inputdataconfig.json"), "w", encoding="utf-8") as handle:
        json.dump(channels, handle)


if __name__ == "__main__":
    unittest.main()
