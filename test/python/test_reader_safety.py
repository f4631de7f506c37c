"""What a reader refuses and keeps to itself (issue 38): a manifest's names that would lead out of the
dataset, a byte changed in a folder or channel (CRCs checked on every source by default, with an
opt-out), secrets of an endpoint URL in its errors, the cache's limit with downloads in flight, and
a folder that holds no published version. The back-off rule is checked here with its clock injected;
on the S3 test server, through the fault proxy, by reader_safety_s3.py."""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import threading
import traceback
import unittest
from typing import BinaryIO, List

from shardio import FormatError, Placement
from shardio.catalog.manifest import read_manifest
from shardio.epoch.stream import consumer_images
from shardio.source.directory import ShardDirectory
from shardio.format.crc32c import NATIVE
from shardio.errors import redact
from shardio.source.s3_objects import Backoff, S3Objects, S3ReadError
from shardio.source.shard_cache import ShardCache
from support import HAS_TORCH, NO_TORCH, dataset_manifest, manifest_file_channels, needs_packed, packed, source_files

SECRET = "s3cr3t-pa55"


def copy_of(test: unittest.TestCase, name: str) -> str:
    """A copy of the packed dataset of format `name`, removed after the test."""
    folder = tempfile.mkdtemp(prefix="shardio-safety-")
    test.addCleanup(shutil.rmtree, folder, True)
    root = os.path.join(folder, name)
    shutil.copytree(packed()[name], root)  # type: ignore[arg-type]
    return root


def rewrite_root_manifest(root: str, change) -> str:
    """The root's manifest: the current version's own (never changed) with `change` made to it."""
    (version,) = os.listdir(os.path.join(root, "versions"))
    document = dataset_manifest(root, f"versions/{version}/manifest.json")
    change(document)
    path = os.path.join(root, "manifest.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle)
    return path


def flip_byte(path: str, offset: int) -> None:
    with open(path, "r+b") as handle:
        handle.seek(offset)
        byte = handle.read(1)
        handle.seek(offset)
        handle.write(bytes([byte[0] ^ 0x01]))


def tfrecord_refusal(path: str, offset: int) -> str:
    """What refuses a byte flipped in record 1 (at `offset`) of the TFRecord shard at `path`: the
    record's own CRC-32C where CRC-32C is computed natively, else the shard's CRC-32, checked whole
    before its first record (shard_crc.py)."""
    if NATIVE:
        return (rf"^{path}: record 1 at offset {offset}: its \d+ bytes do not match their CRC-32C, a corrupted TFRecord "
                r"\(a byte changed after packing\); check_crc=False")
    return rf"^{path} \(shard .*\): its \d+ bytes have CRC-32 0x[0-9a-f]{{8}} but .* lists 0x[0-9a-f]{{8}}: the shard changed"


def read_every_record(source) -> int:
    return sum(1 for _ in consumer_images(source, Placement(), 0))


def files_under(folder: str) -> List[str]:
    return sorted(os.path.relpath(os.path.join(parent, name), folder) for parent, _dirs, names in os.walk(folder) for name in names)


@needs_packed
class ManifestNamesTest(unittest.TestCase):
    """Every name a manifest gives is one safe path component, or a key of the layout's shape."""

    def test_a_dataset_version_that_is_a_path_is_refused_before_anything_is_read_by_it(self) -> None:
        root = copy_of(self, "tfrecord")
        for bad in ("../../x/elsewhere", "v00000001-e71779b1/../..", "v00000001-e71779b1\n", 7):
            path = rewrite_root_manifest(root, lambda m: m.update(datasetVersion=bad))
            with self.subTest(datasetVersion=bad), self.assertRaisesRegex(
                    FormatError, rf"dataset manifest {path}: datasetVersion {re.escape(repr(bad))} is not a version id \(v<8 digits>-"
                                 r"<8 hex digits>, such as v00000002-1a2b3c4d\); refused, as it would name a path"):
                ShardDirectory(root)

    def test_keys_of_another_shape_than_the_layouts_are_refused_naming_the_field_and_the_shape(self) -> None:
        root = copy_of(self, "tfrecord")
        version = dataset_manifest(root)["datasetVersion"]
        for field, bad, kind in (("key", f"versions/{version}/shards/part-0.txt", "shard"),
                                 ("key", f"versions/{version}/index/part-00000-of-00005.tfrecord", "shard"),
                                 ("key", "versions/elsewhere/shards/part-00000-of-00005.tfrecord", "shard"),
                                 ("key", f"versions/{version}/shards/-rf .tfrecord", "shard"),
                                 ("indexKey", f"versions/{version}/index/part 0.idx", "index"),
                                 ("membersKey", f"versions/{version}/shards/part-00000-of-00005.jsonl", "members")):
            path = rewrite_root_manifest(root, lambda m: m["shards"][0].update({field: bad}))
            with self.subTest(field=field, key=bad), self.assertRaisesRegex(
                    FormatError, rf"dataset manifest {path}: shards\[0\]\.{field} '{re.escape(bad)}' is not a {kind} key of the "
                                 "dataset layout"):
                ShardDirectory(root)

    @unittest.skipUnless(HAS_TORCH, NO_TORCH)
    def test_data_loader_over_a_folder_and_a_file_url_refuses_such_a_manifest_and_writes_nothing(self) -> None:
        from shardio.torch.dataset import data_loader

        root = copy_of(self, "tfrecord")
        rewrite_root_manifest(root, lambda m: m.update(datasetVersion="../../x/elsewhere"))
        before = files_under(os.path.dirname(root))
        for location in (root, "file://" + root):
            with self.subTest(location=location), self.assertRaisesRegex(FormatError, "datasetVersion '../../x/elsewhere' is not a version id"):
                data_loader(location, 4, num_workers=0)
        self.assertEqual(files_under(os.path.dirname(root)), before)


@needs_packed
class CrcOnEverySourceTest(unittest.TestCase):
    """A byte changed after packing is refused by default, naming the shard and the record; check_crc=False reads it."""

    def corrupt_tfrecord_payload(self, root: str) -> tuple:
        """Flips a byte in the middle of record 1 of shard 2 (an image byte: the record still parses); returns (shard, offset)."""
        directory = ShardDirectory(root, check_crc=False)
        offset, end = directory.offsets(2)[1:3]
        flip_byte(directory.shards[2].path, (offset + end) // 2)
        return directory.shards[2], offset

    def test_a_folder_of_tfrecord_shards_names_the_shard_and_the_record(self) -> None:
        root = copy_of(self, "tfrecord")
        shard, offset = self.corrupt_tfrecord_payload(root)
        with self.assertRaisesRegex(FormatError, tfrecord_refusal(shard.path, offset)):
            read_every_record(ShardDirectory(root))
        self.assertEqual(read_every_record(ShardDirectory(root, check_crc=False)), packed()["files"])

    def test_a_folder_of_recordio_shards_names_the_shard_before_its_first_record(self) -> None:
        root = copy_of(self, "recordio")
        directory = ShardDirectory(root, check_crc=False)
        shard = directory.shards[3]
        flip_byte(shard.path, directory.offsets(3)[1] + 40)
        listed = read_manifest(os.path.join(root, "manifest.json")).shards[3]
        checksum, value = ("CRC-32C", listed.crc32c) if NATIVE else ("CRC-32", listed.crc32)  # shard_crc.py
        records = []
        with self.assertRaisesRegex(FormatError, rf"^{shard.path} \(shard {shard.key}\): its {shard.size} bytes have {checksum} "
                                                 rf"0x[0-9a-f]{{8}} but {root}/manifest.json lists {value:#010x}: the shard changed"):
            for image in consumer_images(ShardDirectory(root), Placement(), 0):
                records.append(image)
        self.assertNotIn(shard.key, {image.shard for image in records}, "no record of the shard is handed out")
        self.assertEqual(read_every_record(ShardDirectory(root, check_crc=False)), packed()["files"])

    def test_a_sagemaker_channel_is_checked_too(self) -> None:
        from shardio.source.channels import open_channel
        from test_torch import write_channels

        root = copy_of(self, "tfrecord")
        shard, offset = self.corrupt_tfrecord_payload(root)
        input_dir = tempfile.mkdtemp(prefix="shardio-channel-")
        self.addCleanup(shutil.rmtree, input_dir, True)
        write_channels(input_dir, {"train": {"TrainingInputMode": "File"}, "index": {"TrainingInputMode": "File"}}, {})
        manifest_file_channels(root, os.path.join(input_dir, "data"))
        channel = os.path.join(input_dir, "data", "train", shard.key)
        with self.assertRaisesRegex(FormatError, tfrecord_refusal(channel, offset)):
            read_every_record(open_channel("train", Placement(), 0, index_channel="index", input_dir=input_dir))
        unchecked = open_channel("train", Placement(), 0, index_channel="index", input_dir=input_dir, check_crc=False)
        self.assertEqual(read_every_record(unchecked), packed()["files"])

    def test_a_pipe_mode_tfrecord_stream_is_checked_record_by_record(self) -> None:
        from shardio.pipe_mode.pipe import PipeChannel, pipe_path
        from test_pipe import concatenated_shards, feed

        root = copy_of(self, "tfrecord")
        self.corrupt_tfrecord_payload(root)
        data = concatenated_shards(root)
        with tempfile.TemporaryDirectory() as data_dir:
            writer = feed(pipe_path(data_dir, "train", 0), data)
            with self.assertRaisesRegex(FormatError, r"train_0: record \d+ at offset \d+: its \d+ bytes do not match their CRC-32C"):
                list(PipeChannel(data_dir, "train", timeout=10).images(0))
            writer.join(10)

    @unittest.skipUnless(HAS_TORCH, NO_TORCH)
    def test_data_loader_checks_by_default_and_check_crc_false_opts_out(self) -> None:
        from shardio.torch.dataset import data_loader

        root = copy_of(self, "tfrecord")
        self.corrupt_tfrecord_payload(root)
        with self.assertRaisesRegex(FormatError, r"record 1 at offset \d+: its \d+ bytes do not match their CRC-32C"):
            list(data_loader(root, 4, num_workers=0, collate_fn=len))
        self.assertEqual(sum(data_loader(root, 4, num_workers=0, collate_fn=len, check_crc=False)), packed()["files"])


class RedactionTest(unittest.TestCase):
    def test_endpoint_credentials_and_presigned_query_strings_are_redacted(self) -> None:
        cases = {
            f'Could not connect to the endpoint URL: "http://user:{SECRET}@127.0.0.1:9/b/k"':
                'Could not connect to the endpoint URL: "http://<redacted>@127.0.0.1:9/b/k"',
            f"https://us@er:{SECRET}@s3.example.com/x": "https://<redacted>@s3.example.com/x",
            (f"https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA{SECRET}%2F20260101"
             f"&X-Amz-Signature={SECRET}&X-Amz-Security-Token={SECRET}&x-id=GetObject"):
                ("https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=<redacted>"
                 "&X-Amz-Signature=<redacted>&X-Amz-Security-Token=<redacted>&x-id=GetObject"),
            f"https://b.s3.amazonaws.com/k?AWSAccessKeyId=AKIA&Signature={SECRET}&Expires=1": (
                "https://b.s3.amazonaws.com/k?AWSAccessKeyId=<redacted>&Signature=<redacted>&Expires=1"),
            "s3://bucket/prefix/manifest.json: NoSuchKey": "s3://bucket/prefix/manifest.json: NoSuchKey",
        }
        for text, expected in cases.items():
            with self.subTest(text=text):
                self.assertEqual(redact(text), expected)

    def test_an_s3_error_through_an_endpoint_with_a_password_names_neither_in_its_message_nor_its_traceback(self) -> None:
        saved = {name: os.environ.get(name) for name in ("AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                                                         "AWS_DEFAULT_REGION")}
        os.environ.update({"AWS_ENDPOINT_URL_S3": f"http://user:{SECRET}@127.0.0.1:9", "AWS_ACCESS_KEY_ID": "test",
                           "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1"})
        try:
            with self.assertRaises(S3ReadError) as raised:
                S3Objects("bucket", "prefix/", attempts=2, retry_seconds=0, timeout=1,
                          backoff=Backoff(sleep=lambda _seconds: None)).read("manifest.json")
        finally:
            for name, value in saved.items():
                os.environ.pop(name, None) if value is None else os.environ.__setitem__(name, value)
        printed = "".join(traceback.format_exception(type(raised.exception), raised.exception, raised.exception.__traceback__))
        self.assertRegex(printed, r"GetObject s3://bucket/prefix/manifest.json: failed 2 times in \d+\.\d s \(retried for 0 s at most: "
                                  r"retry_seconds, SHARDIO_S3_RETRY_SECONDS\), last: EndpointConnectionError")
        self.assertIn("http://<redacted>@127.0.0.1:9/", printed)
        self.assertNotIn(SECRET, printed)


class FakeTime:
    """A clock that moves only when slept on: the back-off's waits, without waiting."""

    def __init__(self) -> None:
        self.now = 0.0
        self.waits: List[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


class BackoffRuleTest(unittest.TestCase):
    def test_waits_double_from_a_tenth_of_a_second_to_five_each_a_draw_below_that(self) -> None:
        self.assertEqual([Backoff(draw=lambda: 1.0).wait(retry) for retry in range(1, 10)],
                         [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0])
        self.assertEqual(Backoff(draw=lambda: 0.25).wait(3), 0.1)
        self.assertEqual(Backoff(draw=lambda: 0.0).wait(1000), 0.0)


@needs_packed
class CacheLimitTest(unittest.TestCase):
    """The cache's bytes on disk, measured as each download's last byte is written, stay under the limit:
    the downloads in flight count (they did not: 4.7 MB on disk with a 1 MB limit)."""

    def measure(self, threads: int, limit_shards: int) -> tuple:
        manifest = read_manifest(os.path.join(packed()["tfrecord"], "manifest.json"))  # type: ignore[arg-type]
        largest = manifest.largest_shard_bytes
        cache_dir = tempfile.mkdtemp(prefix="shardio-cache-")
        self.addCleanup(shutil.rmtree, cache_dir, True)
        cache = ShardCache(cache_dir, limit_shards * largest)
        peaks: List[int] = []
        lock = threading.Lock()
        at_once = threading.Barrier(threads, timeout=10) if threads > 1 else None

        def fetch(key: str, handle: BinaryIO) -> None:
            with open(os.path.join(packed()["tfrecord"], key), "rb") as shard:  # type: ignore[arg-type]
                handle.write(shard.read())
            handle.flush()
            with lock:
                peaks.append(sum(os.path.getsize(os.path.join(cache_dir, path)) for path in files_under(cache_dir)))
            if at_once is not None:
                at_once.wait()  # every download holds its bytes until all have theirs

        shards = manifest.shards
        for first in range(0, len(shards) - threads + 1, threads):
            running = [threading.Thread(target=cache.fetch, args=(shard.key, fetch), kwargs={"size": shard.bytes or 0})
                       for shard in shards[first:first + threads]]
            for thread in running:
                thread.start()
            for thread in running:
                thread.join(20)
        self.assertEqual(len(peaks), len(shards) - len(shards) % threads)
        return max(peaks), limit_shards * largest

    def test_one_download_at_a_time_makes_room_before_it_starts(self) -> None:
        peak, limit = self.measure(threads=1, limit_shards=2)
        self.assertLessEqual(peak, limit)

    def test_downloads_at_once_count_each_other(self) -> None:
        peak, limit = self.measure(threads=2, limit_shards=3)
        self.assertLessEqual(peak, limit)


@needs_packed
class NoPublishedVersionTest(unittest.TestCase):
    def test_a_folder_with_only_an_unpublished_versions_folder_says_so_plainly(self) -> None:
        root = copy_of(self, "tfrecord")
        for name in ("manifest.json", "published"):
            path = os.path.join(root, name)
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
        for path in files_under(root):
            if path.endswith("manifest.json"):  # a failed first pack wrote no manifest
                os.remove(os.path.join(root, path))
        with self.assertRaisesRegex(FileNotFoundError, rf"^{root}: no published version: there is no manifest.json at its root\. "
                                                       r"A pack that failed before it published leaves only versions/<id>/ folders"):
            ShardDirectory(root)


if __name__ == "__main__":
    unittest.main()
