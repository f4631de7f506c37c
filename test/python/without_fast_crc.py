"""The readers where no fast CRC-32C is installed (issue 46): the crc32c, google_crc32c and awscrt
modules hidden before shardio is imported, as on a stock SageMaker PyTorch image. A shard whose
manifest lists its CRC-32 is checked whole with zlib before its first record is used, and a byte
changed anywhere is refused naming the shard, on a folder, the S3 cache and DALI, TFRecord and
RecordIO, without a byte checked in pure Python; a manifest packed before lists no CRC-32 and
keeps the pure-Python CRC-32C.

Run by test/container/without-fast-crc.test.ts in a process of its own (the modules must be hidden
before shardio looks for them), which packs both formats (SHARDIO_TEST_PACKED) and starts the S3
server (SHARDIO_TEST_S3: {"endpoint", "accessKeyId", "secretAccessKey", "region"}). The file's name
keeps it out of container-python.test.ts's discovery (test*.py).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import unittest
from typing import Callable, List
from unittest import mock

from support import hide_modules

hide_modules()

from shardio import FormatError, Placement  # noqa: E402
from shardio.catalog.manifest import read_manifest
from shardio.epoch.stream import consumer_images
from shardio.source.directory import ShardDirectory
from shardio.source.s3_dataset import S3Options, S3ShardDirectory  # noqa: E402
from shardio.source.s3_objects import S3ReadError  # noqa: E402
from support import needs_packed, packed  # noqa: E402
from test_reader_safety import copy_of, flip_byte, rewrite_root_manifest  # noqa: E402

CRC32C = sys.modules["shardio.format.crc32c"]
_S3 = os.environ.get("SHARDIO_TEST_S3")
needs_s3 = unittest.skipUnless(_S3, "SHARDIO_TEST_S3 is not set: run through `npx jest test/container/without-fast-crc.test.ts`")
FORMATS = ("tfrecord", "recordio")


class PurePythonCalls:
    """Counts the bytes checked by the pure-Python CRC-32C while it is entered."""

    def __enter__(self) -> "PurePythonCalls":
        self.bytes = 0
        real = CRC32C.pure_crc32c

        def counted(data, crc=0):
            self.bytes += len(data)
            return real(data, crc)
        self.patch = mock.patch.object(CRC32C, "pure_crc32c", counted)
        self.patch.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.patch.stop()


def records_of(directory: ShardDirectory, handed: List[str]) -> None:
    for image in consumer_images(directory, Placement(), 0):
        handed.append(image.shard)


def flipped(test: unittest.TestCase, name: str, shard: int = 2) -> tuple:
    """A copy of the packed dataset `name` with a byte in the middle of record 1 of shard `shard`
    flipped (an image byte: the record still parses): (root, shard file)."""
    root = copy_of(test, name)
    directory = ShardDirectory(root, check_crc=False)
    start, end = directory.offsets(shard)[1:3]
    flip_byte(directory.shards[shard].path, (start + end) // 2)
    return root, directory.shards[shard]


def crc32_refusal(path: str, key: str, size: int, listed_in: str, listed: int) -> str:
    return (rf"^{re.escape(path)} \(shard {re.escape(key)}\): its {size} bytes have CRC-32 0x[0-9a-f]{{8}} but "
            rf"{re.escape(listed_in)} lists {listed:#010x}: the shard changed after packing")


@needs_packed
class FolderWithoutFastCrcTest(unittest.TestCase):
    def test_no_fast_crc32c_is_found(self) -> None:
        self.assertEqual((CRC32C.NATIVE, CRC32C.NATIVE_MODULE), (False, None))

    def test_every_shard_lists_a_crc32_and_a_sound_epoch_checks_no_byte_in_pure_python(self) -> None:
        for name in FORMATS:
            with self.subTest(format=name), PurePythonCalls() as pure:
                directory = ShardDirectory(packed()[name])  # type: ignore[arg-type]
                self.assertTrue(all(shard.crc32 is not None for shard in directory.manifest.shards))  # type: ignore[union-attr]
                handed: List[str] = []
                records_of(directory, handed)
                self.assertEqual(len(handed), packed()["files"])
                self.assertEqual(pure.bytes, 0)

    def test_a_flipped_byte_is_refused_naming_the_shard_before_any_of_its_records(self) -> None:
        for name in FORMATS:
            with self.subTest(format=name):
                root, shard = flipped(self, name)
                manifest = read_manifest(os.path.join(root, "manifest.json"))
                listed = next(entry for entry in manifest.shards if entry.key == shard.key)
                handed: List[str] = []
                with self.assertRaisesRegex(FormatError, crc32_refusal(shard.path, shard.key, shard.size, manifest.path, listed.crc32)):
                    records_of(ShardDirectory(root), handed)
                self.assertNotIn(shard.key, handed, "no record of the shard is handed out")
                handed.clear()
                records_of(ShardDirectory(root, check_crc=False), handed)
                self.assertEqual(len(handed), packed()["files"])

    def test_a_manifest_packed_before_crc32_keeps_the_pure_python_crc32c(self) -> None:
        expected = {"tfrecord": r": record 1 at offset \d+: its \d+ bytes do not match their CRC-32C",
                    "recordio": r" \(shard .*\): its \d+ bytes have CRC-32C 0x[0-9a-f]{8} but "}
        for name in FORMATS:
            with self.subTest(format=name):
                root, shard = flipped(self, name)
                rewrite_root_manifest(root, lambda m: [entry.pop("crc32") for entry in m["shards"]])
                with PurePythonCalls() as pure, self.assertRaisesRegex(FormatError, rf"^{re.escape(shard.path)}{expected[name]}"):
                    records_of(ShardDirectory(root), [])
                self.assertGreater(pure.bytes, 0)


@needs_packed
class DaliWithoutFastCrcTest(unittest.TestCase):
    def test_a_flipped_byte_is_refused_by_its_crc32_before_the_pipeline_is_built(self) -> None:
        from test_dali import FakeDali

        dali = FakeDali()
        with mock.patch.dict(sys.modules, dali.modules()):
            from shardio.dali import dali_loader

            for name in FORMATS:
                with self.subTest(format=name):
                    root, shard = flipped(self, name, shard=4)
                    listed = read_manifest(os.path.join(root, "manifest.json")).shards[4]
                    with PurePythonCalls() as pure, self.assertRaisesRegex(
                            FormatError, crc32_refusal(shard.path, shard.key, shard.size, f"{root}/manifest.json", listed.crc32)):
                        dali_loader(ShardDirectory(root), 8, placement=Placement(), num_threads=2)
                    self.assertEqual((dali.pipelines, pure.bytes), ([], 0))


@needs_packed
@needs_s3
class S3CacheWithoutFastCrcTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        s3 = json.loads(_S3)  # type: ignore[arg-type]
        os.environ.update({"AWS_ACCESS_KEY_ID": str(s3["accessKeyId"]), "AWS_SECRET_ACCESS_KEY": str(s3["secretAccessKey"]),
                           "AWS_DEFAULT_REGION": str(s3["region"]), "AWS_ENDPOINT_URL": str(s3["endpoint"])})
        os.environ.pop("AWS_ENDPOINT_URL_S3", None)

    def directory(self, location: str, **options) -> Callable[[], S3ShardDirectory]:
        bucket, _sep, prefix = location[len("s3://"):].partition("/")
        cache = tempfile.mkdtemp(prefix="shardio-crc-cache-")
        self.addCleanup(shutil.rmtree, cache, True)
        # The attempts only (retry_seconds=0): a corrupt object stays corrupt, a minute's retries would prove nothing.
        return lambda: S3ShardDirectory(bucket, prefix, options=S3Options(cache_dir=cache, attempts=2, retry_seconds=0, **options))

    def test_a_sound_dataset_is_read_whole_without_a_byte_checked_in_pure_python(self) -> None:
        from reading_anywhere import upload

        for name in FORMATS:
            with self.subTest(format=name), PurePythonCalls() as pure:
                handed: List[str] = []
                records_of(self.directory(upload(packed()[name]))(), handed)  # type: ignore[arg-type]
                self.assertEqual((len(handed), pure.bytes), (packed()["files"], 0))

    def test_a_flipped_byte_is_refused_by_its_crc32_naming_the_shard_and_never_cached(self) -> None:
        from reading_anywhere import cached_shards, upload

        for name in FORMATS:
            with self.subTest(format=name):
                root, shard = flipped(self, name)
                location = upload(root)
                listed = read_manifest(os.path.join(root, "manifest.json")).shards[2]
                opened = self.directory(location)
                directory = opened()
                with self.assertRaisesRegex(S3ReadError, rf"GetObject {re.escape(location + shard.key)}: failed 2 times in [\d.]+ s \(retried for 0 s at most: .*\), last: "
                                                         rf"ValueError: received bytes of CRC-32 0x[0-9a-f]{{8}} but .*manifest.json "
                                                         rf"lists {listed.crc32:#010x}"):
                    records_of(directory, [])
                self.assertNotIn(shard.key, [os.path.relpath(path, directory.cache.root) for path in cached_shards(directory.cache.root)])


if __name__ == "__main__":
    unittest.main()
