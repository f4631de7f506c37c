"""The S3 reader on the S3 test server (issues 38 and 45): a root manifest whose datasetVersion is a
path is refused and nothing is written outside the cache; throttling (503 SlowDown) through the
fault proxy is waited out past the 6 attempts, and given up after the 60 s retry budget with an error
that says how long it tried (the back-off's clock injected: nothing waits 60 s); a 5 s network blip
that cuts half the shard GETs is outlasted, every record read once; an endpoint's password never
reaches an error; the cache's bytes on disk stay under cache_limit during an epoch with downloads in
flight; a prefix with no published version says so.

Run by test/container/reader-safety.test.ts, which packs the shards (SHARDIO_TEST_PACKED), starts
the server and three fault proxies, and passes them in SHARDIO_TEST_S3: {"endpoint", "accessKeyId",
"secretAccessKey", "region", "faults": {"throttled": 12 SlowDowns then through, "throttledForever",
"blip": for 5 s from the first shard GET, every GET of every other shard cut halfway}}.
The file's name keeps it out of container-python.test.ts's discovery (test*.py): it needs the server.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import traceback
import unittest
from collections import Counter
from typing import BinaryIO, Dict, List

from shardio import FormatError, Placement
from shardio.catalog.manifest import read_manifest
from shardio.epoch.stream import consumer_images
from shardio.source.s3_dataset import S3Options, S3ShardDirectory
from shardio.source.s3_objects import DEFAULT_ATTEMPTS, Backoff, ObjectTooLargeError, S3Objects, S3ReadError
from support import needs_packed, packed
from reading_anywhere import Endpoint, upload
from test_reader_safety import FakeTime, files_under
from versioned import SECOND, make_versioned

_S3 = os.environ.get("SHARDIO_TEST_S3")
needs_s3 = unittest.skipUnless(_S3, "SHARDIO_TEST_S3 is not set: run through `npx jest test/container/reader-safety.test.ts`")
S3: Dict[str, object] = json.loads(_S3) if _S3 else {}
THROTTLED_GETS = 12
"""SlowDowns the "throttled" proxy answers first: more than the 6 attempts before the retry budget."""
SECRET = "s3cr3t-pa55"


def bucket_and_prefix(location: str) -> tuple:
    bucket, _, prefix = location[len("s3://"):].partition("/")
    return bucket, prefix


def records_read(directory: S3ShardDirectory) -> int:
    return sum(1 for _ in consumer_images(directory, Placement(), 0))


def size_if_present(path: str) -> int:
    """A file's size, or 0 when it went between the listing and this stat: another worker's download
    (`<shard>.part-…`) renamed into place, or a shard evicted, both of which the cache may do meanwhile."""
    try:
        return os.path.getsize(path)
    except FileNotFoundError:
        return 0


@needs_packed
@needs_s3
class S3ReaderSafetyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.work = tempfile.mkdtemp(prefix="shardio-safety-s3-")
        cls.root = packed()["tfrecord"]
        os.environ.update({"AWS_ACCESS_KEY_ID": str(S3["accessKeyId"]), "AWS_SECRET_ACCESS_KEY": str(S3["secretAccessKey"]),
                           "AWS_DEFAULT_REGION": str(S3["region"]), "AWS_ENDPOINT_URL": str(S3["endpoint"])})
        os.environ.pop("AWS_ENDPOINT_URL_S3", None)
        cls.s3 = upload(cls.root)
        cls.manifest = read_manifest(os.path.join(cls.root, "manifest.json"))

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.work, ignore_errors=True)

    def folder(self, name: str) -> str:
        return tempfile.mkdtemp(dir=self.work, prefix=f"{name}-")

    def test_a_root_manifest_whose_dataset_version_is_a_path_is_refused_and_nothing_is_written_outside_the_cache(self) -> None:
        from shardio.torch.dataset import data_loader

        dataset = os.path.join(self.folder("traversal"), "dataset")
        shutil.copytree(self.root, dataset)
        with open(os.path.join(dataset, "manifest.json"), encoding="utf-8") as handle:
            document = json.load(handle)
        document["datasetVersion"] = "../../x/elsewhere"
        with open(os.path.join(dataset, "manifest.json"), "w", encoding="utf-8") as handle:
            json.dump(document, handle)
        location = upload(dataset)
        base = self.folder("traversal-cache")
        cache = os.path.join(base, "a", "b", "cache")
        with self.assertRaisesRegex(FormatError, r"datasetVersion '../../x/elsewhere' is not a version id"):
            data_loader(location, 4, num_workers=0, cache_dir=cache)
        self.assertEqual(files_under(base), [])  # checked before it is cached: nothing written at all

    def test_a_pinned_manifest_that_names_another_version_is_refused_and_cached_under_no_id(self) -> None:
        dataset = make_versioned(self.root, os.path.join(self.folder("pinned"), "dataset"))
        # Version 1's folder holds version 2's manifest.
        shutil.copyfile(os.path.join(dataset.root, dataset.manifest_key(SECOND)), os.path.join(dataset.root, dataset.manifest_key(dataset.first)))
        location = bucket_and_prefix(upload(dataset.root))
        cache = self.folder("pinned-cache")
        with self.assertRaisesRegex(FormatError, rf"names version '{SECOND}', not '{dataset.first}', the version pinned"):
            S3ShardDirectory(*location, version=dataset.first, options=S3Options(cache_dir=cache))
        self.assertEqual(files_under(cache), [])
        self.assertEqual(S3ShardDirectory(*location, version=SECOND, options=S3Options(cache_dir=cache)).dataset_version, SECOND)

    def test_throttling_past_the_old_five_attempts_is_waited_out_and_every_record_read(self) -> None:
        time = FakeTime()
        with Endpoint(str(S3["faults"]["throttled"])):  # type: ignore[index]
            directory = S3ShardDirectory(*bucket_and_prefix(self.s3), options=S3Options(
                cache_dir=self.folder("throttled"), shards_ahead=0, backoff=Backoff(clock=time.clock, sleep=time.sleep, draw=lambda: 0.25)))
            self.assertEqual(records_read(directory), packed()["files"])
        self.assertEqual(len(time.waits), THROTTLED_GETS)
        self.assertLess(time.now, 20)  # the waits' sum: 12 waits below 0.1…5 s, a quarter of each

    def test_throttling_that_lasts_is_given_up_after_the_60_second_budget_saying_how_long_it_tried(self) -> None:
        time = FakeTime()
        objects = S3Objects(*bucket_and_prefix(self.s3), retry_seconds=60, backoff=Backoff(clock=time.clock, sleep=time.sleep))
        with Endpoint(str(S3["faults"]["throttledForever"])):  # type: ignore[index]
            with self.assertRaisesRegex(S3ReadError, rf"^GetObject {self.s3}manifest.json: throttled for (\d+\.\d) s \((\d+) attempts, "
                                                     r"retried for 60 s at most: retry_seconds, SHARDIO_S3_RETRY_SECONDS\), "
                                                     r"last: ClientError: .*SlowDown") as raised:
                objects.read("manifest.json")
        seconds, attempts = raised.exception.args[0].split("throttled for ", 1)[1].split(" s (", 1)
        self.assertGreaterEqual(float(seconds), 60)
        self.assertEqual(int(attempts.split(" ", 1)[0]), len(time.waits) + 1)
        self.assertGreater(len(time.waits), 5)
        self.assertTrue(all(0 <= wait <= 5 for wait in time.waits))

    def test_a_five_second_blip_that_cuts_half_the_shard_gets_is_outlasted_and_every_record_read_once(self) -> None:
        # Real waits: the blip lasts 5 s of the proxy's clock. The retry budget is the default one, or
        # SHARDIO_S3_RETRY_SECONDS's: with 0 (the attempts only), the first cut shard fails the epoch.
        retries: List[int] = []

        class CountedBackoff(Backoff):
            def wait(self, retry: int) -> float:
                retries.append(retry)
                return super().wait(retry)

        with Endpoint(str(S3["faults"]["blip"])):  # type: ignore[index]
            directory = S3ShardDirectory(*bucket_and_prefix(self.s3), options=S3Options(
                cache_dir=self.folder("blip"), shards_ahead=len(self.manifest.shards) - 1, backoff=CountedBackoff()))
            names = Counter(record.filename for record in consumer_images(directory, Placement(), 0))
        self.assertEqual(len(names), packed()["files"])
        self.assertEqual(set(names.values()), {1})
        self.assertGreaterEqual(max(retries), DEFAULT_ATTEMPTS)  # a GET went past the attempts, within the budget

    def test_an_object_over_the_reader_s_size_limit_is_refused_by_its_length_before_it_is_read(self) -> None:
        directory = S3ShardDirectory(*bucket_and_prefix(self.s3), options=S3Options(cache_dir=self.folder("limit")))
        size = len(directory.objects.read("manifest.json"))
        with self.assertRaisesRegex(ObjectTooLargeError, rf"^GetObject s3://.*/manifest\.json: .* MiB is more than the "
                                                         rf"{(size - 1) / 2 ** 20:g} MiB allowed; refused without reading it$"):
            directory.objects.read("manifest.json", max_bytes=size - 1)
        self.assertEqual(len(directory.objects.read("manifest.json", max_bytes=size)), size)

    def test_an_endpoint_password_never_reaches_an_error(self) -> None:
        port = str(S3["endpoint"]).rsplit(":", 1)[1]
        once = S3Options(cache_dir=self.folder("secret"), attempts=1, retry_seconds=0, timeout=1)
        with Endpoint(f"http://user:{SECRET}@127.0.0.1:9"):
            with self.assertRaises(S3ReadError) as refused:
                S3ShardDirectory(*bucket_and_prefix(self.s3), options=once)
        with Endpoint(f"http://user:{SECRET}@127.0.0.1:{port}"), self.assertRaises(FileNotFoundError) as missing:
            S3ShardDirectory(str(bucket_and_prefix(self.s3)[0]), "no/such/dataset/", options=S3Options(cache_dir=self.folder("secret"), attempts=1))
        for error in (refused.exception, missing.exception):
            printed = "".join(traceback.format_exception(type(error), error, error.__traceback__))
            with self.subTest(error=type(error).__name__):
                self.assertNotIn(SECRET, printed)
        self.assertIn("http://<redacted>@127.0.0.1:9/", str(refused.exception))

    def test_the_cache_on_disk_stays_under_its_limit_with_downloads_in_flight_during_an_epoch(self) -> None:
        largest = self.manifest.largest_shard_bytes
        for shards_ahead, limit in ((0, 2 * largest), (2, 3 * largest)):
            cache = self.folder(f"limit-{shards_ahead}")
            directory = S3ShardDirectory(*bucket_and_prefix(self.s3), options=S3Options(cache_dir=cache, cache_limit=limit, shards_ahead=shards_ahead))
            on_disk: List[int] = []
            fetch = directory._fetch

            def measured(key: str, handle: BinaryIO, fetch=fetch, cache=cache, on_disk=on_disk) -> None:
                fetch(key, handle)
                handle.flush()  # the download's every byte on disk, beside the others in flight
                on_disk.append(sum(size_if_present(os.path.join(cache, path)) for path in files_under(cache)
                                   if path.endswith((".tfrecord",)) or ".tfrecord.part-" in path))
            directory._fetch = measured  # type: ignore[method-assign]
            for epoch in range(2):
                with self.subTest(shards_ahead=shards_ahead, epoch=epoch):
                    self.assertEqual(sum(1 for _ in consumer_images(directory, Placement(), epoch)), packed()["files"])
            with self.subTest(shards_ahead=shards_ahead):
                self.assertGreaterEqual(len(on_disk), len(self.manifest.shards))
                self.assertLessEqual(max(on_disk), limit)

    def test_a_prefix_with_no_published_version_says_so(self) -> None:
        leftovers = os.path.join(self.folder("unpublished"), "dataset")
        version = self.manifest.dataset_version
        shutil.copytree(os.path.join(self.root, "versions", version), os.path.join(leftovers, "versions", version))  # type: ignore[arg-type]
        os.remove(os.path.join(leftovers, "versions", version, "manifest.json"))  # type: ignore[arg-type]
        location = upload(leftovers)
        with self.assertRaisesRegex(FileNotFoundError, rf"^{location}: no published version: there is no manifest.json at its root"):
            S3ShardDirectory(*bucket_and_prefix(location), options=S3Options(cache_dir=self.folder("unpublished-cache")))


if __name__ == "__main__":
    unittest.main()
