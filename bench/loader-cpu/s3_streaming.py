"""The `s3` source of bench.py: the TFRecord dataset streamed by `shardio.torch.dataset.data_loader` from the
local S3 test server (OpenStack Swift, test/support/s3-server/swift_s3_server.py, Debian's
python3-swift) through a fresh cache, so that epoch 0 is cold (every shard fetched) and later epochs
read the cache; and the cache's bytes on disk after epochs with `cache_limit` = ¼ of the dataset.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, Optional, Tuple

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SERVER = os.path.join(REPO, "test", "support", "s3-server", "swift_s3_server.py")
BUCKET = "bench-loader-cpu"
PREFIX = "datasets/tfrecord/"


class LocalS3:
    """The S3 test server with the packed dataset at `s3://bench-loader-cpu/datasets/tfrecord/`; this
    process's AWS_* variables point the readers (and the workers they fork) at it."""

    def __init__(self, dataset: str, work_dir: str) -> None:
        self.data = tempfile.mkdtemp(prefix="s3-", dir=work_dir)
        self.server = subprocess.Popen(["/usr/bin/python3", "-E", "-s", SERVER, "--dir", self.data, "--port", "0"],
                                       stdout=subprocess.PIPE, text=True, start_new_session=True)
        line = self.server.stdout.readline() if self.server.stdout else ""
        if not line.startswith("ready "):
            self.close()
            raise SystemExit(f"the S3 test server did not start (python3-swift installed?): {line!r}")
        os.environ.update({"AWS_ENDPOINT_URL": f"http://127.0.0.1:{int(line.split()[1])}", "AWS_ACCESS_KEY_ID": "test:tester",
                           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"})
        self._upload(dataset)
        self.uri = f"s3://{BUCKET}/{PREFIX}"

    def _upload(self, dataset: str) -> None:
        import boto3
        from botocore.config import Config

        client = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"], config=Config(s3={"addressing_style": "path"}))
        client.create_bucket(Bucket=BUCKET)
        for folder, _dirs, names in os.walk(dataset):
            for name in names:
                path = os.path.join(folder, name)
                client.upload_file(path, BUCKET, PREFIX + os.path.relpath(path, dataset).replace(os.sep, "/"))

    def loader(self, transform: Callable, workers: int, batch_size: int, shuffle_buffer: int, collate: Callable,
               cache_dir: str, cache_limit: Optional[int] = None, shards_ahead: int = 2) -> Any:
        from shardio import LoaderOptions, Placement, S3Options, Source, data_loader

        source = Source(self.uri, s3=S3Options(cache_dir=cache_dir, cache_limit=cache_limit, shards_ahead=shards_ahead))
        return data_loader(source, batch_size, LoaderOptions(transform=transform, num_workers=workers, collate_fn=collate,
                                                             shuffle_buffer=shuffle_buffer, seed=0, placement=Placement()))

    def get_floor(self, threads: int) -> Tuple[int, float, float]:
        """The server's own ceiling for a cold epoch: every shard of the dataset fetched once by signed
        GETs (boto3, as the readers fetch them), `threads` at a time, bodies read to their end and
        dropped. Returns (bytes, seconds, CPU seconds of the server and this client together): no
        reader streams the shards faster from this server, and on a machine whose cores the server
        shares, a cold epoch costs that CPU on top of the folder's."""
        import boto3
        from botocore.config import Config

        client = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"],
                              config=Config(s3={"addressing_style": "path"}, max_pool_connections=max(threads, 10)))
        keys = [item["Key"] for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=PREFIX)
                for item in page.get("Contents", []) if item["Key"].endswith((".tfrecord", ".rec"))]

        def fetch(key: str) -> int:
            return len(client.get_object(Bucket=BUCKET, Key=key)["Body"].read())

        cpu_before = self._server_cpu() + time.process_time()
        started = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            fetched = sum(pool.map(fetch, keys))
        return fetched, time.perf_counter() - started, self._server_cpu() + time.process_time() - cpu_before

    def _server_cpu(self) -> float:
        """The server process's user + system CPU seconds (/proc: it runs Swift's servers in one process)."""
        with open(f"/proc/{self.server.pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        if self.server.poll() is None:
            os.killpg(self.server.pid, 9)
            self.server.wait()
        shutil.rmtree(self.data, ignore_errors=True)


def cache_bytes(cache_dir: str) -> Dict[str, int]:
    """Bytes on disk under the cache: whole shards, part files (downloads under way), the rest (manifests, indexes)."""
    found = {"shards": 0, "parts": 0, "other": 0}
    for folder, _dirs, names in os.walk(cache_dir):
        for name in names:
            size = os.path.getsize(os.path.join(folder, name))
            kind = "parts" if ".part-" in name else "shards" if name.endswith((".tfrecord", ".rec")) else "other"
            found[kind] += size
    return found
