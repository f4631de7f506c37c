"""The reader driven by the dataset manifest: a versioned dataset (manifest version 2, shards reused
across version folders) read through its root and through a version's ManifestFile channels, a
pinned version, confined keys, the class count, and datasets written before versions."""
from __future__ import annotations

import json
import os
import tempfile
import unittest
from typing import Dict, List

from shardio import FormatError, Placement
from shardio.epoch.stream import consumer_images
from shardio.format.records import ImageRecord, ShardFormat
from shardio.source.channels import channel_manifest, open_channel
from shardio.source.directory import ShardDirectory
from shardio.dali import reader_arguments
from shardio.format.recordio import RECORDIO_MAGIC
from support import needs_packed, needs_torch, packed, source_files
from versioned import SECOND, Versioned, before_versions, make_versioned, manifest_file_channels, write_manifest

FORMATS = ("tfrecord", "recordio")


def key(image: ImageRecord) -> str:
    """What tells records apart in both formats: TFRecord has the file name, RecordIO the id."""
    return image.filename if image.filename is not None else str(image.record_id)


def keys_in_order(directory: ShardDirectory) -> List[str]:
    return [key(directory.image(record, shard)) for shard in range(len(directory.shards)) for record in directory.read(shard)]


def write_input_config(input_dir: str, channels: dict) -> str:
    os.makedirs(os.path.join(input_dir, "config"), exist_ok=True)
    os.makedirs(os.path.join(input_dir, "data"), exist_ok=True)
    with open(os.path.join(input_dir, "config", "inputdataconfig.json"), "w", encoding="utf-8") as handle:
        json.dump(channels, handle)
    return os.path.join(input_dir, "data")


class VersionedTestCase(unittest.TestCase):
    """Both formats as two versions under a temporary root (the engine's pack and one derived from it,
    versioned.py), and the records of each packed shard."""

    def setUp(self) -> None:
        self.packed = packed()
        self.files = source_files(self.packed["source"])  # type: ignore[arg-type]
        self.by_bytes = {data: name for name, data in self.files.items()}
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.tmp = folder.name
        self.datasets: Dict[str, Versioned] = {}
        self.packed_keys: Dict[str, List[List[str]]] = {}
        for name in FORMATS:
            self.datasets[name] = make_versioned(self.packed[name], os.path.join(self.tmp, name))  # type: ignore[arg-type]
            original = ShardDirectory(self.packed[name])  # type: ignore[arg-type]
            self.packed_keys[name] = [[key(original.image(r, s)) for r in original.read(s)] for s in range(len(original.shards))]

    def expected(self, name: str, version: str) -> List[str]:
        """A version's records in its manifest's order, from the packed shards it lists."""
        return [k for position in self.datasets[name].positions(version) for k in self.packed_keys[name][position]]

    def assert_every_file_once(self, name: str, directory: ShardDirectory, keys: List[str]) -> None:
        self.assertEqual(len(keys), len(self.files))
        self.assertEqual(len(set(keys)), len(self.files))
        for shard in range(len(directory.shards)):
            for record in directory.read(shard):
                image = directory.image(record, shard)
                source_key = image.filename if name == "tfrecord" else self.by_bytes[image.image]
                self.assertEqual(image.image, self.files[source_key])
                self.assertEqual(image.label, self.datasets[name].packed["labels"][source_key.split("/")[0]])


@needs_packed
class DatasetRootTest(VersionedTestCase):
    """A FastFile or FSx channel mounts the dataset root."""

    def test_the_current_version_is_read_from_the_roots_manifest_every_record_once_in_manifest_order(self) -> None:
        for name in FORMATS:
            with self.subTest(format=name):
                dataset = self.datasets[name]
                directory = ShardDirectory(dataset.root, check_crc=True)
                self.assertEqual(directory.manifest.dataset_version, SECOND)
                self.assertIs(directory.format, ShardFormat.TFRECORD if name == "tfrecord" else ShardFormat.RECORDIO)
                self.assertEqual([s.path for s in directory.shards], [os.path.join(dataset.root, k) for k in dataset.shard_keys(SECOND)])
                self.assertEqual([s.index_path for s in directory.shards], [os.path.join(dataset.root, k) for k in dataset.index_keys(SECOND)])
                self.assertEqual(directory.record_counts(), [s["records"] for s in dataset.manifest(SECOND)["shards"]])
                keys = keys_in_order(directory)
                self.assertEqual(keys, self.expected(name, SECOND))
                self.assert_every_file_once(name, directory, keys)

    def test_the_rank_and_worker_split_over_a_fastfile_channel_reads_every_record_once(self) -> None:
        for name in FORMATS:
            with tempfile.TemporaryDirectory() as input_dir:
                data_dir = write_input_config(input_dir, {"train": {"TrainingInputMode": "FastFile"}})
                os.symlink(self.datasets[name].root, os.path.join(data_dir, "train"))
                parts = []
                for rank in range(2):
                    placement = Placement(rank=rank, world_size=2, local_rank=rank, local_world_size=2)
                    source = open_channel("train", placement, 3, input_dir=input_dir)
                    for worker in range(3):
                        parts.append([key(i) for i in consumer_images(source, placement, 1, seed=2, shuffle_buffer=4,
                                                                      worker=worker, workers=3)])
                everything = [k for part in parts for k in part]
                with self.subTest(format=name):
                    self.assertEqual(sorted(everything), sorted(self.expected(name, SECOND)))
                    self.assertEqual(len(set(everything)), len(self.files))

    def test_a_pinned_version_is_read_while_the_roots_manifest_names_a_newer_one(self) -> None:
        for name in FORMATS:
            dataset = self.datasets[name]
            first = dataset.first
            with tempfile.TemporaryDirectory() as input_dir:
                data_dir = write_input_config(input_dir, {"train": {"TrainingInputMode": "FastFile"}})
                os.symlink(dataset.root, os.path.join(data_dir, "train"))
                source = open_channel("train", Placement(), 0, manifest=dataset.manifest_key(first), input_dir=input_dir)
                with self.subTest(format=name):
                    self.assertEqual(source.manifest.dataset_version, first)
                    keys = keys_in_order(source)
                    self.assertEqual(keys, self.expected(name, first))
                    self.assertNotEqual(keys, self.expected(name, SECOND))  # the current version's order
                    self.assertEqual([s.path for s in source.shards], [os.path.join(data_dir, "train", k) for k in dataset.shard_keys(first)])
                    self.assert_every_file_once(name, source, keys)
                    self.assertEqual(channel_manifest("train", manifest=dataset.manifest_key(first), input_dir=input_dir).dataset_version, first)
                    self.assertEqual(channel_manifest("train", input_dir=input_dir).dataset_version, SECOND)

    def test_a_pinned_manifest_that_is_not_there_or_leaves_the_root_is_refused_naming_it(self) -> None:
        root = self.datasets["tfrecord"].root
        with self.assertRaisesRegex(FileNotFoundError, r"dataset manifest versions/v00000009-00000000/manifest.json .* is in none of"):
            ShardDirectory(root, manifest="versions/v00000009-00000000/manifest.json")
        for pinned in ("../manifest.json", "/etc/hostname", "versions/../manifest.json"):
            with self.subTest(pinned=pinned), self.assertRaisesRegex(ValueError, f"dataset manifest '{pinned}'.*relative to the dataset root"):
                ShardDirectory(root, manifest=pinned)

    def test_recordio_dali_reads_the_shards_in_manifest_order_with_the_versions_global_index(self) -> None:
        dataset = self.datasets["recordio"]
        directory = ShardDirectory(dataset.root)
        arguments = reader_arguments(directory)
        self.assertEqual(arguments["path"], [os.path.join(dataset.root, k) for k in dataset.shard_keys(SECOND)])
        self.assertEqual(arguments["index_path"], [os.path.join(dataset.root, "versions", SECOND, "index", "all.idx")])
        with open(arguments["index_path"][0], encoding="ascii") as handle:
            global_index = handle.read()
        self.assertEqual(global_index, directory.merged_recordio_index())
        concatenated = b"".join(_read(path) for path in arguments["path"])
        lines = [line.split("\t") for line in global_index.splitlines()]
        self.assertEqual([record_id for record_id, _ in lines], self.expected("recordio", SECOND))
        for _record_id, offset in lines:
            self.assertEqual(concatenated[int(offset):int(offset) + 4], RECORDIO_MAGIC.to_bytes(4, "little"))

    def test_tfrecord_dali_gets_each_shards_index_in_manifest_order(self) -> None:
        dataset = self.datasets["tfrecord"]
        arguments = reader_arguments(ShardDirectory(dataset.root))
        self.assertEqual(arguments, {"path": [os.path.join(dataset.root, k) for k in dataset.shard_keys(SECOND)],
                                     "index_path": [os.path.join(dataset.root, k) for k in dataset.index_keys(SECOND)]})


@needs_packed
class ManifestFileChannelsTest(VersionedTestCase):
    """File channels made from a version's SageMaker ManifestFiles: shards.manifest and index.manifest."""

    def test_sharded_by_s3_key_each_host_reads_its_listed_shards_in_manifest_order_and_together_every_record_once(self) -> None:
        for name in FORMATS:
            dataset = self.datasets[name]
            everything: List[str] = []
            for host in range(2):
                with tempfile.TemporaryDirectory() as input_dir:
                    data_dir = write_input_config(input_dir, {
                        "train": {"TrainingInputMode": "File", "S3DistributionType": "ShardedByS3Key"},
                        "index": {"TrainingInputMode": "File", "S3DistributionType": "FullyReplicated"},
                    })
                    manifest_file_channels(dataset, SECOND, data_dir, hosts=2, host=host)
                    source = open_channel("train", Placement(), 0, index_channel="index", input_dir=input_dir)
                    mine = set(sorted(dataset.shard_keys(SECOND))[host::2])
                    in_order = [k for k in dataset.shard_keys(SECOND) if k in mine]
                    with self.subTest(format=name, host=host):
                        self.assertEqual(source.manifest.dataset_version, SECOND)
                        self.assertTrue(source.host_sharded and source.indexed)
                        self.assertEqual([s.path for s in source.shards], [os.path.join(data_dir, "train", k) for k in in_order])
                        self.assertIsNone(source.global_index_path)  # the version's all.idx covers shards this host lacks
                        everything += keys_in_order(source)
            with self.subTest(format=name):
                self.assertEqual(sorted(everything), sorted(self.expected(name, SECOND)))
                self.assertEqual(len(set(everything)), len(self.files))

    def test_fully_replicated_channels_read_the_whole_version_in_manifest_order(self) -> None:
        for name in FORMATS:
            dataset = self.datasets[name]
            with tempfile.TemporaryDirectory() as input_dir:
                data_dir = write_input_config(input_dir, {"train": {"TrainingInputMode": "File"}, "index": {"TrainingInputMode": "File"}})
                manifest_file_channels(dataset, SECOND, data_dir)
                source = open_channel("train", Placement(), 0, index_channel="index", input_dir=input_dir)
                with self.subTest(format=name):
                    keys = keys_in_order(source)
                    self.assertEqual(keys, self.expected(name, SECOND))
                    self.assert_every_file_once(name, source, keys)
                    if name == "recordio":
                        self.assertEqual(source.global_index_path, os.path.join(data_dir, "index", "versions", SECOND, "index", "all.idx"))

    def test_a_shard_the_manifest_does_not_list_means_channels_of_two_versions_and_is_refused(self) -> None:
        dataset = self.datasets["tfrecord"]
        with tempfile.TemporaryDirectory() as data_dir:
            manifest_file_channels(dataset, SECOND, data_dir)
            # version 1's shard 1, which version 2 rewrote into its own folder, in a channel read with version 2's manifest
            stray = dataset.shard_keys(dataset.first)[1]
            self.assertNotIn(stray, dataset.shard_keys(SECOND))
            os.symlink(os.path.join(dataset.root, stray), os.path.join(data_dir, "train", stray))
            with self.assertRaisesRegex(FormatError, f"holds {stray}, which .*versions/{SECOND}/manifest.json does not list"):
                ShardDirectory(os.path.join(data_dir, "train"), os.path.join(data_dir, "index"))

    def test_a_listed_shard_missing_from_a_fully_replicated_channel_is_an_error_naming_it(self) -> None:
        dataset = self.datasets["tfrecord"]
        with tempfile.TemporaryDirectory() as data_dir:
            manifest_file_channels(dataset, SECOND, data_dir)
            missing = dataset.shard_keys(SECOND)[2]
            os.unlink(os.path.join(data_dir, "train", missing))
            with self.assertRaisesRegex(FileNotFoundError, f"lacks 1 of the 5 shards that .*manifest.json lists, first {missing}"):
                ShardDirectory(os.path.join(data_dir, "train"), os.path.join(data_dir, "index"))
            host = ShardDirectory(os.path.join(data_dir, "train"), os.path.join(data_dir, "index"), host_sharded=True)
            self.assertEqual(len(host.shards), 4)

    def test_shards_of_a_version_without_its_manifest_are_refused_rather_than_guessed(self) -> None:
        dataset = self.datasets["tfrecord"]
        with tempfile.TemporaryDirectory() as data_dir:
            manifest_file_channels(dataset, SECOND, data_dir)
            with self.assertRaisesRegex(FileNotFoundError, r"holds versions/ of a versioned dataset but no manifest; pass the index channel"):
                ShardDirectory(os.path.join(data_dir, "train"))

    def test_several_version_manifests_and_none_at_the_root_ask_for_a_pinned_one(self) -> None:
        dataset = self.datasets["tfrecord"]
        with tempfile.TemporaryDirectory() as data_dir:
            manifest_file_channels(dataset, SECOND, data_dir)
            manifest_file_channels(dataset, dataset.first, data_dir, shards_channel="old-train")
            with self.assertRaisesRegex(FileNotFoundError, r"2 version manifests and no manifest.json at the root: .*pin one"):
                ShardDirectory(os.path.join(data_dir, "train"), os.path.join(data_dir, "index"))
            pinned = ShardDirectory(os.path.join(data_dir, "train"), os.path.join(data_dir, "index"),
                                    manifest=dataset.manifest_key(SECOND))
            self.assertEqual(keys_in_order(pinned), self.expected("tfrecord", SECOND))


@needs_packed
class ManifestChecksTest(VersionedTestCase):
    """A manifest that would make the reader leave the dataset or read wrongly is refused, naming it."""

    def rewritten(self, change) -> str:
        dataset = self.datasets["tfrecord"]
        manifest = dataset.manifest(SECOND)
        change(manifest)
        return write_manifest(dataset.root, "manifest.json", manifest)

    def test_a_key_that_leaves_the_dataset_root_is_refused_naming_it(self) -> None:
        for field, bad in (("key", "../outside/part-00000-of-00005.tfrecord"), ("key", "/etc/hostname"),
                           ("indexKey", "versions/../../index.idx"), ("key", "versions//x.tfrecord")):
            path = self.rewritten(lambda m: m["shards"][1].update({field: bad}))
            with self.subTest(field=field, key=bad), \
                    self.assertRaisesRegex(FormatError, rf"{path}: shards\[1\]\.{field} '{bad}' leaves the dataset root"):
                ShardDirectory(self.datasets["tfrecord"].root)

    def test_a_shard_listed_twice_is_refused(self) -> None:
        path = self.rewritten(lambda m: m.update(shards=m["shards"] + m["shards"][:1], records=m["records"] + m["shards"][0]["records"]))
        with self.assertRaisesRegex(FormatError, rf"{path}: lists versions/{SECOND}/shards/part-00003-of-00005.tfrecord more than once"):
            ShardDirectory(self.datasets["tfrecord"].root)

    def test_an_index_that_disagrees_with_the_manifests_record_count_is_refused(self) -> None:
        def fewer(manifest: dict) -> None:
            manifest["shards"][0]["records"] -= 1
            manifest["records"] -= 1
        path = self.rewritten(fewer)
        directory = ShardDirectory(self.datasets["tfrecord"].root)
        with self.assertRaisesRegex(FormatError, rf"indexes \d+ records but {path} lists \d+"):
            directory.record_counts()

    def test_an_unknown_manifest_version_or_format_is_refused(self) -> None:
        for change, message in ((lambda m: m.update(version=3), r"version 3 is not one this reader knows \(1, 2\)"),
                                (lambda m: m.update(format="parquet"), r"format 'parquet' is not one of tfrecord, recordio")):
            path = self.rewritten(change)
            with self.subTest(message=message), self.assertRaisesRegex(FormatError, f"dataset manifest {path}: {message}"):
                ShardDirectory(self.datasets["tfrecord"].root)

    def test_a_shard_checksum_that_is_not_4_bytes_of_base64_is_refused(self) -> None:
        for field, name, bad in (("crc32c", "CRC-32C", "AAAA"), ("crc32", "CRC-32", "not base64!"), ("crc32", "CRC-32", 7)):
            path = self.rewritten(lambda m, field=field, bad=bad: m["shards"][1].update({field: bad}))
            with self.subTest(field=field, bad=bad), self.assertRaisesRegex(
                    FormatError, rf"dataset manifest {path}: shards\[1\]\.{field} must be the base64 of 4 bytes \(a big-endian {name}\), "
                                 f"got {bad!r}"):
                ShardDirectory(self.datasets["tfrecord"].root)

    def test_the_format_comes_from_the_manifest_not_the_extension(self) -> None:
        path = self.rewritten(lambda m: m.update(format="recordio"))
        directory = ShardDirectory(self.datasets["tfrecord"].root)
        self.assertIs(directory.format, ShardFormat.RECORDIO)
        self.assertEqual(directory.manifest.path, path)
        with self.assertRaises(FormatError):  # TFRecord bytes read as RecordIO, as the manifest says
            keys_in_order(directory)


@needs_packed
class BeforeVersionsTest(unittest.TestCase):
    """Datasets written before versions keep reading: a version 1 manifest at the root, or none. The
    engine no longer writes them: versioned.before_versions lays the engine's pack out the old way."""

    def setUp(self) -> None:
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.datasets = {name: os.path.join(folder.name, name) for name in FORMATS}
        self.manifests = {name: before_versions(packed()[name], self.datasets[name]) for name in FORMATS}  # type: ignore[arg-type]

    def test_a_version_1_dataset_is_read_through_its_manifest(self) -> None:
        files = source_files(packed()["source"])  # type: ignore[arg-type]
        for name in FORMATS:
            dataset, manifest = self.datasets[name], self.manifests[name]
            directory = ShardDirectory(dataset, check_crc=True)
            with self.subTest(format=name):
                self.assertEqual((directory.manifest.version, directory.manifest.dataset_version), (1, None))
                self.assertEqual([s.path for s in directory.shards], [os.path.join(dataset, s["key"]) for s in manifest["shards"]])
                self.assertEqual(directory.manifest.classes, len(manifest["labels"]))
                self.assertEqual([s.index_path for s in directory.shards], [os.path.join(dataset, s["indexKey"]) for s in manifest["shards"]])
                self.assertEqual(sum(directory.record_counts()), packed()["files"])
                images = [directory.image(record, shard) for shard in range(len(directory.shards)) for record in directory.read(shard)]
                self.assertEqual(sorted(image.image for image in images), sorted(files.values()))
                if name == "recordio":
                    self.assertEqual(directory.global_index_path, os.path.join(dataset, "index", "all.idx"))
                    with open(directory.global_index_path, encoding="ascii") as handle:
                        self.assertEqual(handle.read(), directory.merged_recordio_index())

    def test_a_version_1_manifest_with_a_key_out_of_the_dataset_is_refused(self) -> None:
        manifest = self.manifests["tfrecord"]
        with tempfile.TemporaryDirectory() as copy:
            manifest["shards"][0]["key"] = "../../etc/hostname"
            path = write_manifest(copy, "manifest.json", manifest)
            with self.assertRaisesRegex(FormatError, rf"{path}: shards\[0\]\.key '../../etc/hostname' leaves the dataset root"):
                ShardDirectory(copy)


@needs_torch
@needs_packed
class NumClassesTest(VersionedTestCase):
    """train.py's --num_classes: the flag, else the manifest's classes, else an error naming what is missing."""

    def args(self, input_dir: str, *options: str):
        import train  # PyTorch: imported only where it is installed

        return train, train.parse_args(["--input_dir", input_dir, *options])

    def test_the_class_count_comes_from_the_manifest_unless_the_flag_is_given(self) -> None:
        dataset = self.datasets["tfrecord"]
        with tempfile.TemporaryDirectory() as input_dir:
            data_dir = write_input_config(input_dir, {"train": {"TrainingInputMode": "File"}, "index": {"TrainingInputMode": "File"}})
            manifest_file_channels(dataset, SECOND, data_dir)
            train, args = self.args(input_dir)
            self.assertEqual(train.num_classes(args), 3)
            train, args = self.args(input_dir, "--num_classes", "7")
            self.assertEqual(train.num_classes(args), 7)

    def test_a_version_1_manifest_gives_the_label_maps_size(self) -> None:
        with tempfile.TemporaryDirectory() as input_dir:
            data_dir = write_input_config(input_dir, {"train": {"TrainingInputMode": "File"}})
            manifest = before_versions(self.packed["recordio"], os.path.join(self.tmp, "before-versions"))  # type: ignore[arg-type]
            self.assertNotIn("classes", manifest)
            os.symlink(os.path.join(self.tmp, "before-versions"), os.path.join(data_dir, "train"))
            train, args = self.args(input_dir)
            self.assertEqual(train.num_classes(args), 3)

    def test_the_pinned_version_from_the_environment_is_the_one_asked(self) -> None:
        dataset = self.datasets["tfrecord"]
        first = dataset.first
        labels = dict(dataset.manifest(first)["labels"], bird=3)
        manifest = dict(dataset.manifest(first), labels=labels, classes=4)
        write_manifest(dataset.root, dataset.manifest_key(first), manifest)
        with tempfile.TemporaryDirectory() as input_dir:
            data_dir = write_input_config(input_dir, {"train": {"TrainingInputMode": "FastFile"}})
            os.symlink(dataset.root, os.path.join(data_dir, "train"))
            os.environ["SHARDIO_DATASET_MANIFEST"] = dataset.manifest_key(first)
            try:
                train, args = self.args(input_dir)
            finally:
                del os.environ["SHARDIO_DATASET_MANIFEST"]
            self.assertEqual(args.dataset_manifest, dataset.manifest_key(first))
            self.assertEqual(train.num_classes(args), 4)
            train, args = self.args(input_dir)
            self.assertEqual(train.num_classes(args), 3)

    def test_no_flag_and_no_manifest_or_no_classes_is_an_error_naming_it(self) -> None:
        with tempfile.TemporaryDirectory() as input_dir:
            data_dir = write_input_config(input_dir, {"train": {"TrainingInputMode": "File"}})
            # A bare folder of shards: the shards/ of a dataset packed before versions, as a channel.
            before_versions(self.packed["tfrecord"], os.path.join(self.tmp, "before-versions"))  # type: ignore[arg-type]
            os.symlink(os.path.join(self.tmp, "before-versions", "shards"), os.path.join(data_dir, "train"))
            train, args = self.args(input_dir)
            with self.assertRaisesRegex(ValueError, r"--num_classes is not given and channel train has no dataset manifest"):
                train.num_classes(args)
        dataset = self.datasets["tfrecord"]
        write_manifest(dataset.root, "manifest.json", dict(dataset.manifest(SECOND), labels={}, classes=0))
        with tempfile.TemporaryDirectory() as input_dir:
            data_dir = write_input_config(input_dir, {"train": {"TrainingInputMode": "FastFile"}})
            os.symlink(dataset.root, os.path.join(data_dir, "train"))
            train, args = self.args(input_dir)
            path = os.path.join(data_dir, "train", "manifest.json")
            with self.assertRaisesRegex(ValueError, rf"--num_classes is not given and {path} has no classes"):
                train.num_classes(args)


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


if __name__ == "__main__":
    unittest.main()
