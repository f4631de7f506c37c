"""The canonical order's block reads (blocks.py): a shard read 16 records at a time, each block in one
read into a buffer reused from block to block and from stream to stream, its records views of it.
What a reader hands out must stay whole however long it is kept, every CRC is still checked, and a
shard cut inside a block is refused. Shards of many blocks each, written here (bad_dataset.py)."""
from __future__ import annotations

import hashlib
import io
import os
import threading
import tempfile
import unittest
from unittest import mock
from typing import Dict, Iterable, List, Optional, Tuple

from shardio import FormatError
from shardio.epoch.order import BLOCK
from shardio.epoch.split import Consumer
from shardio.source.directory import ShardDirectory
from shardio.format import blocks
from shardio.epoch.order import Segment
from bad_dataset import inputs, write_dataset
from test_reader_safety import flip_byte

RECORDS = 230
"""Over 3 shards: 76 or 77 records each, so 5 blocks of 16 per shard, the last of them short."""
FORMATS = (".tfrecord", ".rec")


def count(images: Iterable[Tuple[bytes, int]]) -> Dict[Tuple[str, int], int]:
    """How many times each (image, label) occurs, by the image's digest."""
    counted: Dict[Tuple[str, int], int] = {}
    for image, label in images:
        key = (hashlib.sha256(image).hexdigest()[:16], label)
        counted[key] = counted.get(key, 0) + 1
    return counted


class BlockReadsTest(unittest.TestCase):
    def setUp(self) -> None:
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.tmp = folder.name
        self.files = inputs(RECORDS, {})

    def dataset(self, extension: str) -> str:
        root = os.path.join(self.tmp, extension.strip("."))
        write_dataset(root, self.files, shards=3, extension=extension)
        return root

    def expected(self) -> Dict[Tuple[str, int], int]:
        """How many times each (image digest, label) is packed (every input differs: once each)."""
        return count((data, label) for _key, data, label in self.files)

    def test_records_kept_across_blocks_and_streams_stay_whole(self) -> None:
        for extension in FORMATS:
            directory = ShardDirectory(self.dataset(extension))
            self.assertGreater(min(directory.record_counts()), 4 * BLOCK)  # type: ignore[arg-type]
            for consumers in (1, 2, 3):
                for epoch in (0, 1):
                    with self.subTest(format=extension, consumers=consumers, epoch=epoch):
                        # Every record of the epoch kept until all are read: a record still viewing a reused buffer would
                        # hold a later block's bytes by then.
                        kept = [record for index in range(consumers)
                                for record in directory.images(Consumer(index, consumers), epoch, seed=11)]
                        self.assertTrue(all(type(record.image) is bytes for record in kept))
                        self.assertEqual(count((bytes(record.image), record.label) for record in kept), self.expected())

    def test_where_the_system_cannot_read_at_an_offset_blocks_are_read_after_a_seek(self) -> None:
        directory = ShardDirectory(self.dataset(".tfrecord"))
        with mock.patch.object(blocks, "_PREADV", None):
            kept = list(directory.images(Consumer(0, 1), 0, seed=11))
        self.assertEqual(count((record.image, record.label) for record in kept), self.expected())

    def test_a_block_read_on_its_own_keeps_its_records_whole(self) -> None:
        for extension in FORMATS:
            directory = ShardDirectory(self.dataset(extension))
            sequential = [directory.image(record, 1) for record in directory.read(1)]
            with self.subTest(format=extension):
                # read() without a reused buffer: each block its own, so records of several blocks can be kept
                middle = list(directory.read(1, BLOCK, 3 * BLOCK))
                self.assertEqual([directory.image(record, 1) for record in middle], sequential[BLOCK:3 * BLOCK])
                self.assertEqual(directory.image(directory.record(1, BLOCK + 3), 1), sequential[BLOCK + 3])

    def test_buffers_are_reused_across_streams_and_epochs_and_their_count_is_bounded(self) -> None:
        directory = ShardDirectory(self.dataset(".tfrecord"))
        for epoch in range(3):
            sum(1 for _ in directory.images(Consumer(0, 1), epoch, seed=11))
        kept = list(blocks._free)  # noqa: SLF001 - the process's free buffers, what the next streams take
        self.assertGreaterEqual(len(kept), 1)
        self.assertLessEqual(len(kept), blocks.KEPT_BUFFERS)
        sum(1 for _ in directory.images(Consumer(0, 1), 3, seed=11))
        self.assertTrue(any(buffer is old for buffer in blocks._free for old in kept))  # noqa: SLF001

    def test_a_changed_byte_in_a_middle_block_is_refused_naming_the_record(self) -> None:
        root = self.dataset(".tfrecord")
        directory = ShardDirectory(root)
        offsets = directory.offsets(0)
        position = 2 * BLOCK + 5  # inside the third block, read whole like the others
        flip_byte(directory.shards[0].path, (offsets[position] + offsets[position + 1]) // 2)  # in its image's bytes
        with self.assertRaisesRegex(FormatError, rf"^{directory.shards[0].path}: record {position} at offset {offsets[position]}: "
                                                 r"its \d+ bytes do not match their CRC-32C"):
            list(directory.images(Consumer(0, 1), 0, seed=11))
        self.assertEqual(len(list(ShardDirectory(root, check_crc=False).images(Consumer(0, 1), 0, seed=11))), RECORDS)

    def test_a_shard_cut_inside_a_block_is_refused_naming_it(self) -> None:
        for extension in FORMATS:
            root = self.dataset(extension)
            directory = ShardDirectory(root, check_crc=False)  # the count and framing alone (a RecordIO shard's CRC refuses it first)
            offsets = directory.offsets(2)
            with open(directory.shards[2].path, "r+b") as handle:
                handle.truncate(offsets[BLOCK + 3] + 20)  # past its header, in the second block
            with self.subTest(format=extension), self.assertRaisesRegex(
                    FormatError, rf"^{directory.shards[2].path}: truncated (TFRecord|RecordIO part) of \d+ bytes at offset "
                                 rf"{offsets[BLOCK + 3]}"):
                list(directory.images(Consumer(0, 1), 0, seed=11))


class ReadsRecorded(ShardDirectory):
    """A ShardDirectory whose block reads are recorded (offset, thread name) and can be made to fail at
    an offset, through the handle (blocks._PREADV off) as on a mount without preadv."""

    def __init__(self, root: str) -> None:
        super().__init__(root)
        self.reads: List[Tuple[int, str]] = []
        self.fail_at: Optional[int] = None
        self.read_event = threading.Event()

    def _open_shard(self, shard: int):
        directory = self

        class Recorded(io.FileIO):
            def readinto(self, buffer) -> int:
                offset = self.tell()
                directory.reads.append((offset, threading.current_thread().name))
                directory.read_event.set()
                if offset == directory.fail_at:
                    raise OSError(f"injected failure at offset {offset}")
                return super().readinto(buffer)
        return Recorded(self.shards[shard].path)


class ReadAheadTest(unittest.TestCase):
    """Blocks read ahead (blocks.READ_AHEAD_BLOCKS) in a thread: the same records in the same order,
    once each, whatever the read-ahead; the next block read before the current one's records are all
    handed out; nothing read or held once a stream is dropped; a failed read raised at its block."""

    def setUp(self) -> None:
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.root = os.path.join(folder.name, "tfrecord")
        write_dataset(self.root, inputs(RECORDS, {}), shards=3, extension=".tfrecord")
        patcher = mock.patch.object(blocks, "_PREADV", None)
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_the_records_and_their_order_are_the_same_whatever_the_read_ahead(self) -> None:
        directory = ShardDirectory(self.root)
        for consumers in (1, 3):
            for epoch in (0, 1):
                orders = {}
                for ahead in (0, 1, 2, 5):
                    with mock.patch.object(blocks, "READ_AHEAD_BLOCKS", ahead):
                        orders[ahead] = [(record.image, record.label) for index in range(consumers)
                                         for record in directory.images(Consumer(index, consumers), epoch, seed=11)]
                with self.subTest(consumers=consumers, epoch=epoch):
                    self.assertEqual(len(orders[0]), RECORDS)
                    self.assertEqual(len(set(orders[0])), RECORDS)
                    for ahead, order in orders.items():
                        self.assertEqual(order, orders[0], f"{ahead} blocks ahead")

    def test_the_next_block_is_read_in_a_thread_before_the_current_ones_records_are_all_handed_out(self) -> None:
        directory = ReadsRecorded(self.root)
        offsets = directory.offsets(0)
        segments = [Segment(0, BLOCK, 2 * BLOCK), Segment(0, 2 * BLOCK, 3 * BLOCK)]
        with mock.patch.object(blocks, "READ_AHEAD_BLOCKS", 1):
            records = directory.read_segments(0, segments, reuse=True)
            next(records)  # the first record of the first block
            while len(directory.reads) < 2:  # the second block's read, under way in its thread
                self.assertTrue(directory.read_event.wait(60), "the second block is never read")
                directory.read_event.clear()
            positions = [position for position, _record in records]
        self.assertEqual(positions, list(range(BLOCK + 1, 3 * BLOCK)))
        self.assertEqual([offset for offset, _thread in directory.reads[:2]], [offsets[BLOCK], offsets[2 * BLOCK]])
        self.assertTrue(directory.reads[1][1].startswith("shardio-read-ahead"))

    def test_a_stream_dropped_mid_block_leaves_no_read_under_way_and_gives_its_buffers_back(self) -> None:
        directory = ShardDirectory(self.root)
        del blocks._free[:]  # noqa: SLF001
        taken: List[bytearray] = []
        take = blocks._take  # noqa: SLF001

        def counted(size: int) -> bytearray:
            taken.append(take(size))
            return taken[-1]

        with mock.patch.object(blocks, "READ_AHEAD_BLOCKS", 2), mock.patch.object(blocks, "_take", counted):
            records = directory.read_segments(0, [Segment(0, start, start + BLOCK) for start in (0, BLOCK, 2 * BLOCK)], reuse=True)
            next(records)
            records.close()
        self.assertEqual([thread.name for thread in threading.enumerate() if thread.name.startswith("shardio-read-ahead")], [])
        # Every buffer taken is back: the current block's, and those of the reads ahead that had begun
        # (a read not yet begun when the stream was dropped is cancelled and takes none; how many had
        # begun depends on the threads' timing).
        self.assertTrue(1 <= len(taken) <= 3, len(taken))
        self.assertEqual(sorted(map(id, blocks._free)), sorted(map(id, taken)))  # noqa: SLF001

    def test_a_failed_read_ahead_is_raised_at_its_block_after_every_record_before_it(self) -> None:
        directory = ReadsRecorded(self.root)
        offsets = directory.offsets(1)
        directory.fail_at = offsets[2 * BLOCK]
        handed: List[int] = []
        with mock.patch.object(blocks, "READ_AHEAD_BLOCKS", 2), \
                self.assertRaisesRegex(OSError, rf"injected failure at offset {offsets[2 * BLOCK]}"):
            for position, _record in directory.read_segments(1, [Segment(1, start, start + BLOCK) for start in (0, BLOCK, 2 * BLOCK)]):
                handed.append(position)
        self.assertEqual(handed, list(range(2 * BLOCK)))


if __name__ == "__main__":
    unittest.main()
