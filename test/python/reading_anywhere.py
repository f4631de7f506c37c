"""shardio.torch.dataset.data_loader over a folder, a file:// URL, an S3 prefix of the local S3 test server
and a SageMaker channel: every record once per epoch on 1 and 2 workers and 2 ranks, resumption,
version pinning, the cache's limit and atomicity, and S3 faults (a 5xx, a reset, a hung GET).

Run by test/container/readers-anywhere.test.ts, which packs the shards (SHARDIO_TEST_PACKED), starts
the S3 server and a fault proxy per fault in front of it, and passes them in SHARDIO_TEST_S3:
{"endpoint", "accessKeyId", "secretAccessKey", "region", "faults": {"slowDown", "reset", "hang", "silent"}}.
The file's name keeps it out of container-python.test.ts's discovery (test*.py): it needs the server.
"""
from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from typing import Dict, Iterator, List

from shardio import Placement
from shardio.catalog.manifest import read_manifest
from shardio.epoch.split import Consumer
from shardio.format.crc32c import crc32c
from shardio.source.location import parse_location
from shardio.source.s3_objects import S3ReadError
from support import needs_packed, needs_torch, packed, source_files
from test_torch import CONTAINER, keep, name_and_label, write_channels
from versioned import SECOND, make_versioned

from shardio.torch.dataset import channel_data_loader, data_loader

_S3 = os.environ.get("SHARDIO_TEST_S3")
needs_s3 = unittest.skipUnless(_S3, "SHARDIO_TEST_S3 is not set: run through `npx jest test/container/readers-anywhere.test.ts`")
S3: Dict[str, object] = json.loads(_S3) if _S3 else {}
PREFIX = "datasets/flowers/"


def s3_client():
    import boto3
    from botocore.config import Config

    return boto3.client("s3", endpoint_url=str(S3["endpoint"]), region_name=str(S3["region"]),
                        aws_access_key_id=str(S3["accessKeyId"]), aws_secret_access_key=str(S3["secretAccessKey"]),
                        config=Config(s3={"addressing_style": "path"}))


_buckets = 0


def upload(root: str, prefix: str = PREFIX) -> str:
    """Every file under `root` into a new bucket under `prefix`; returns `s3://bucket/prefix`."""
    global _buckets
    _buckets += 1
    bucket = f"anywhere-{os.getpid()}-{_buckets}"
    client = s3_client()
    client.create_bucket(Bucket=bucket)
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            client.upload_file(path, bucket, prefix + os.path.relpath(path, root).replace(os.sep, "/"))
    return f"s3://{bucket}/{prefix}"


class Endpoint:
    """Points the S3 readers of this process (and the loader workers it forks) at `endpoint`."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    def __enter__(self) -> None:
        self.saved = {name: os.environ.get(name) for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3")}
        os.environ["AWS_ENDPOINT_URL_S3"] = self.endpoint
        os.environ["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9"  # the service-specific variable wins, as in the SDKs

    def __exit__(self, *_: object) -> None:
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def names(loader, epoch: int = 0) -> List[str]:
    loader.set_epoch(epoch) if hasattr(loader, "set_epoch") else loader.dataset.set_epoch(epoch)
    return [name for batch in loader for name, _label in batch]


def cached_shards(cache_dir: str) -> Dict[str, bytes]:
    """Whole shards in the cache by path (part files left out)."""
    found = {}
    for folder, _dirs, files in os.walk(cache_dir):
        for name in files:
            if name.endswith((".tfrecord", ".rec")):
                with open(os.path.join(folder, name), "rb") as handle:
                    found[os.path.join(folder, name)] = handle.read()
    return found


@needs_torch
@needs_packed
@needs_s3
class DataLoaderAnywhereTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.work = tempfile.mkdtemp(prefix="shardio-anywhere-")
        cls.root = packed()["tfrecord"]
        os.environ.update({"AWS_ACCESS_KEY_ID": str(S3["accessKeyId"]), "AWS_SECRET_ACCESS_KEY": str(S3["secretAccessKey"]),
                           "AWS_DEFAULT_REGION": str(S3["region"]), "AWS_ENDPOINT_URL": str(S3["endpoint"])})
        os.environ.pop("AWS_ENDPOINT_URL_S3", None)
        cls.s3 = upload(cls.root)
        cls.files = sorted(source_files(packed()["source"]))

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.work, ignore_errors=True)

    def cache(self) -> str:
        return tempfile.mkdtemp(dir=self.work, prefix="cache-")

    def loader(self, location: str, workers: int = 2, placement: Placement = Placement(), **options):
        options.setdefault("cache_dir", self.cache())
        return data_loader(location, 3, transform=name_and_label, collate_fn=keep, num_workers=workers, placement=placement,
                           shuffle_buffer=4, seed=5, **options)

    def test_a_folder_a_file_url_and_an_s3_prefix_read_every_record_once_per_epoch_on_1_and_2_workers_and_2_ranks(self) -> None:
        for location in (self.root, "file://" + self.root, self.s3):
            for workers in (0, 1, 2):
                with self.subTest(location=location, workers=workers):
                    loader = self.loader(location, workers)
                    for epoch in (0, 1):
                        self.assertEqual(sorted(names(loader, epoch)), self.files)
            with self.subTest(location=location, ranks=2):
                cache = self.cache()  # one host: the ranks share its cache
                parts = [names(self.loader(location, 2, Placement(rank, 2, rank, 2), cache_dir=cache), 1) for rank in (0, 1)]
                self.assertEqual(set(parts[0]) & set(parts[1]), set())
                self.assertEqual(sorted(parts[0] + parts[1]), self.files)

    def test_an_s3_prefix_hands_out_the_records_a_folder_does_in_the_same_order(self) -> None:
        self.assertEqual(names(self.loader(self.s3, 2), 3), names(self.loader(self.root, 2), 3))

    def test_an_s3_source_pickles_for_workers_started_by_spawn_and_the_copy_reads_every_record(self) -> None:
        source = self.loader(self.s3, 0).dataset.source
        copy = pickle.loads(pickle.dumps(source))
        self.assertEqual(sorted(record.filename for record in copy.images(Consumer(0, 1), 0, 0)), self.files)

    def test_a_position_saved_mid_epoch_resumes_on_s3_as_on_a_folder_and_from_one_to_the_other(self) -> None:
        for saved_on, resumed_on in ((self.root, self.root), (self.s3, self.s3), (self.root, self.s3)):
            with self.subTest(saved_on=saved_on, resumed_on=resumed_on):
                first = self.loader(saved_on, 2, resumable=True)
                first.set_epoch(2)
                seen: List[str] = []
                for index, batch in enumerate(first):
                    seen += [name for name, _ in batch]
                    if index == 3:
                        break
                resumed = self.loader(resumed_on, 2, resumable=True)
                resumed.load_state_dict(first.state_dict(num_samples=len(seen)))
                resumed.set_epoch(2)
                rest = [name for batch in resumed for name, _ in batch]
                self.assertEqual(len(seen), 12)
                self.assertEqual(sorted(seen + rest), self.files)

    def test_a_pinned_version_is_read_by_its_id_and_a_position_saved_on_another_version_is_refused(self) -> None:
        versioned = make_versioned(self.root, os.path.join(self.work, "versioned"))
        location = upload(versioned.root)
        for where in (versioned.root, location):
            with self.subTest(location=where):
                pinned = self.loader(where, 2, resumable=True, version=versioned.first)
                pinned.set_epoch(0)
                self.assertEqual(pinned.dataset.source.dataset_version, versioned.first)
                first_batch = next(iter(pinned))
                current = self.loader(where, 2, resumable=True)
                self.assertEqual(current.dataset.source.dataset_version, SECOND)
                with self.assertRaisesRegex(ValueError, f"saved reading dataset version {versioned.first} but this loader reads {SECOND}"):
                    current.load_state_dict(pinned.state_dict())
                self.assertEqual(len(first_batch), 3)
                self.assertEqual(sorted(names(self.loader(where, 2, version=versioned.first))), self.files)
        with self.assertRaisesRegex(ValueError, "dataset version 'latest': must be a version id such as v00000002-1a2b3c4d"):
            self.loader(location, version="latest")
        with self.assertRaisesRegex(S3ReadError, f"GetObject {location}versions/v00000009-00000000/manifest.json: .*NoSuchKey"):
            self.loader(location, version="v00000009-00000000")

    def test_the_cache_keeps_under_its_limit_and_a_second_epoch_reads_it(self) -> None:
        manifest = read_manifest(os.path.join(self.root, "manifest.json"))
        total = sum(shard.bytes or 0 for shard in manifest.shards)
        limit = total // 4
        cache = self.cache()
        loader = self.loader(self.s3, 2, cache_dir=cache, cache_limit=limit)
        for epoch in range(3):
            self.assertEqual(sorted(names(loader, epoch)), self.files)
            held = sum(len(data) for data in cached_shards(cache).values())
            self.assertLessEqual(held, limit + 2 * manifest.largest_shard_bytes, f"epoch {epoch}")
        # Unlimited, then from the cache alone: nothing answers at the endpoint the second time.
        whole = self.cache()
        self.assertEqual(sorted(names(self.loader(self.s3, 2, cache_dir=whole, version=manifest.dataset_version))), self.files)
        self.assertEqual(sum(len(data) for data in cached_shards(whole).values()), total)
        with Endpoint("http://127.0.0.1:9"):
            again = self.loader(self.s3, 2, cache_dir=whole, version=manifest.dataset_version, attempts=1, retry_seconds=0,
                                timeout=1)
            self.assertEqual(sorted(names(again, 1)), self.files)
            with self.assertRaisesRegex(S3ReadError, r"GetObject .*manifest.json: .*Could not connect"):
                self.loader(self.s3, 2, cache_dir=whole, attempts=1, retry_seconds=0, timeout=1)  # the current version is asked for each time

    def test_a_shard_whose_bytes_differ_from_the_manifest_is_refused_naming_it_and_never_cached(self) -> None:
        manifest = read_manifest(os.path.join(self.root, "manifest.json"))
        corrupt = os.path.join(self.work, "corrupt")
        shutil.copytree(self.root, corrupt)
        key = manifest.shards[2].key
        with open(os.path.join(corrupt, key), "r+b") as handle:
            handle.seek(100)
            byte = handle.read(1)
            handle.seek(100)
            handle.write(bytes([byte[0] ^ 0xFF]))
        location = upload(corrupt)
        cache = self.cache()
        with self.assertRaisesRegex(S3ReadError, f"GetObject {location}{key}: failed 2 times in [0-9.]+ s \\(.*\\), last: ValueError: received bytes "
                                                 f"of CRC-32C 0x[0-9a-f]{{8}} but .*manifest.json lists {manifest.shards[2].crc32c:#010x}"):
            names(self.loader(location, 0, cache_dir=cache, attempts=2, retry_seconds=0))
        self.assertNotIn(key, [os.path.relpath(path, cache) for path in cached_shards(cache)])

    def test_a_5xx_a_reset_and_a_hung_get_are_tried_again_and_every_record_read_once(self) -> None:
        faults = S3["faults"]
        for fault in ("slowDown", "reset", "hang"):
            with self.subTest(fault=fault), Endpoint(str(faults[fault])):  # type: ignore[index]
                self.assertEqual(sorted(names(self.loader(self.s3, 2, timeout=2))), self.files)

    def test_a_server_that_never_answers_fails_naming_the_object_the_operation_and_the_timeout(self) -> None:
        with Endpoint(str(S3["faults"]["silent"])):  # type: ignore[index]
            with self.assertRaisesRegex(S3ReadError, rf"GetObject {self.s3}manifest.json: failed 2 times in [0-9.]+ s \(.*\), last: .*"
                                                     r"\(no answer within the timeout of 1 s\)"):
                self.loader(self.s3, 2, timeout=1, attempts=2, retry_seconds=0)

    def test_a_reader_killed_mid_download_leaves_no_shard_that_reads_as_whole_and_a_restart_reads_every_record_once(self) -> None:
        manifest = read_manifest(os.path.join(self.root, "manifest.json"))
        cache = self.cache()
        # The answer's headers and its first bytes come, then nothing: the reader is killed mid-body.
        with StallingRelay(str(S3["endpoint"]), forwarded=1000) as stalling:
            reader = subprocess.Popen([sys.executable, "-c", _READ_ALL, self.s3, cache],
                                      env=dict(os.environ, AWS_ENDPOINT_URL_S3=stalling.endpoint, PYTHONPATH=_python_path()))
            try:
                part = _wait_for(lambda: next(_parts(cache), None), 60, "part file")
                time.sleep(0.5)  # the stalled body's first bytes reach the reader
            finally:
                reader.send_signal(signal.SIGKILL)
                reader.wait()
        self.assertTrue(os.path.exists(part), "the killed reader's part file is left behind")
        listed = {shard.key: shard for shard in manifest.shards}
        for path, data in cached_shards(cache).items():  # whatever reads as a shard is whole
            shard = listed[os.path.relpath(path, cache).replace(os.sep, "/")]
            self.assertEqual((len(data), crc32c(data)), (shard.bytes, shard.crc32c), path)
        self.assertEqual(sorted(names(self.loader(self.s3, 2, cache_dir=cache))), self.files)
        self.assertFalse(os.path.exists(part), "the next reader removes a dead reader's part file")
        self.assertEqual(len(cached_shards(cache)), len(manifest.shards))


@needs_torch
@needs_packed
class LocationFormsTest(unittest.TestCase):
    def test_a_sagemaker_channel_is_read_as_channel_data_loader_reads_it(self) -> None:
        from support import manifest_file_channels

        input_dir = tempfile.mkdtemp(prefix="shardio-channel-")
        self.addCleanup(shutil.rmtree, input_dir, True)
        write_channels(input_dir, {"train": {"TrainingInputMode": "File"}, "index": {"TrainingInputMode": "File"}}, {})
        manifest_file_channels(packed()["tfrecord"], os.path.join(input_dir, "data"))
        loader = data_loader("sagemaker://train", 3, transform=name_and_label, collate_fn=keep, num_workers=2, index_channel="index",
                             input_dir=input_dir, shuffle_buffer=4, seed=5)
        expected = channel_data_loader("train", 3, transform=name_and_label, collate_fn=keep, num_workers=2, index_channel="index",
                                       input_dir=input_dir, shuffle_buffer=4, seed=5)
        self.assertEqual(names(loader, 1), names(expected, 1))
        self.assertEqual(sorted(names(loader, 1)), sorted(source_files(packed()["source"])))

    def test_locations_that_cannot_be_read_are_refused_naming_them_and_the_forms_allowed(self) -> None:
        root = packed()["tfrecord"]
        with self.assertRaisesRegex(ValueError, r"dataset location 'gs://b/p/': scheme gs:// is not one of file://, s3://, "
                                                r"sagemaker://; expected a folder \(a path or file:// URL\)"):
            parse_location("gs://b/p/")
        with self.assertRaisesRegex(ValueError, "dataset location 'file://host/data': a file:// URL names a local path"):
            parse_location("file://host/data")
        with self.assertRaisesRegex(ValueError, "dataset location 's3://': expected s3://bucket/prefix/"):
            parse_location("s3://")
        with self.assertRaisesRegex(ValueError, "dataset location 'sagemaker://train/x': expected sagemaker://<channel>"):
            parse_location("sagemaker://train/x")
        with self.assertRaisesRegex(FileNotFoundError, "dataset location '/no/such/folder': no folder /no/such/folder"):
            data_loader("/no/such/folder", 3, num_workers=0)
        # Before data_loader, a packed folder read as a job's input folder failed with a bare FileNotFoundError.
        with self.assertRaisesRegex(FileNotFoundError, rf"{root}/config/inputdataconfig.json: no SageMaker input configuration.*"
                                                       r"data_loader\('/path/to/dataset'\)"):
            channel_data_loader("train", 3, num_workers=0, input_dir=root)
        with self.assertRaisesRegex(KeyError, "channel 'validation': not one of this job's channels"):
            input_dir = tempfile.mkdtemp(prefix="shardio-channel-")
            self.addCleanup(shutil.rmtree, input_dir, True)
            write_channels(input_dir, {"train": {"TrainingInputMode": "File"}}, {})
            data_loader("sagemaker://validation", 3, num_workers=0, input_dir=input_dir)
        self.assertEqual(parse_location("s3://bucket/a/b/"), parse_location("s3://bucket/a/b/"))
        self.assertEqual(sorted(names(data_loader("file://" + root.replace(" ", "%20"), 3, transform=name_and_label,
                                                  collate_fn=keep, num_workers=0))),
                         sorted(source_files(packed()["source"])))


_READ_ALL = """
import sys
from shardio.torch.dataset import data_loader
for _ in data_loader(sys.argv[1], 4, num_workers=0, cache_dir=sys.argv[2], collate_fn=len, shards_ahead=0):
    pass
"""


def _python_path() -> str:
    return os.pathsep.join([os.path.abspath(CONTAINER), os.path.dirname(os.path.abspath(__file__))])


def _parts(cache: str) -> Iterator[str]:
    for folder, _dirs, files in os.walk(cache):
        for name in files:
            path = os.path.join(folder, name)
            if ".tfrecord.part-" in name:  # a shard's (a manifest's or an index's are written at once)
                yield path


def _wait_for(probe, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.01)
    raise AssertionError(f"no {what} within {seconds} s")


class StallingRelay:
    """A TCP relay on 127.0.0.1 to `endpoint` that forwards the first `forwarded` bytes of the answer
    to each shard GET and then nothing more (until closed): that shard's download is under way, and
    stays so, when the test kills its reader. Other requests pass through."""

    def __init__(self, endpoint: str, forwarded: int) -> None:
        host, port = endpoint.rsplit("/", 1)[-1].split(":")
        self.target = (host, int(port))
        self.forwarded = forwarded
        self.server = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.closed = threading.Event()

    def __enter__(self) -> "StallingRelay":
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *_: object) -> None:
        self.closed.set()
        self.server.close()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            shard_get = threading.Event()  # the request on this connection now is a shard's GET
            threading.Thread(target=self._requests, args=(client, upstream, shard_get), daemon=True).start()
            threading.Thread(target=self._answers, args=(upstream, client, shard_get), daemon=True).start()

    def _requests(self, source: socket.socket, sink: socket.socket, shard_get: threading.Event) -> None:
        try:
            while data := source.recv(65536):
                if data.startswith(b"GET ") and b".tfrecord" in data.split(b"\r\n", 1)[0]:
                    shard_get.set()
                sink.sendall(data)
        except OSError:
            pass

    def _answers(self, source: socket.socket, sink: socket.socket, shard_get: threading.Event) -> None:
        sent = 0
        try:
            while data := source.recv(65536):
                if shard_get.is_set():
                    sink.sendall(data[:max(0, self.forwarded - sent)])
                    sent += len(data)
                    if sent >= self.forwarded:
                        self.closed.wait()  # stall: the rest never comes
                        return
                else:
                    sink.sendall(data)
        except OSError:
            pass


if __name__ == "__main__":
    unittest.main()
