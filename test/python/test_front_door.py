"""The readers' front door: `import shardio` exports what users type; `data_loader(source, batch_size,
options)` takes a Source and LoaderOptions, each checked once where it is made; the keyword-style
calls of 0.1.0 (`data_loader(location, batch_size, seed=1)`, `channel_data_loader`, the root's other
names) still work for one release, each with a DeprecationWarning."""
from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import unittest
import warnings

import shardio
from shardio import LoaderOptions, Placement, S3Options, Source
from support import needs_packed, needs_torch, packed

FOUR_RANKS_FIRST = Placement(rank=0, world_size=4, local_rank=0, local_world_size=4)


def deprecations(call):
    """What `call()` returns, and the DeprecationWarnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]


def names(loader) -> list:
    """Every record a loader hands out in one pass (its batches as lists of records), by its name in the dataset."""
    return [(record.filename, record.record_id, record.label) for batch in loader for record in batch]


class RootTest(unittest.TestCase):
    def test_the_root_exports_at_most_15_names_each_of_them_importable(self) -> None:
        self.assertLessEqual(len(shardio.__all__), 15)
        self.assertIn("data_loader", shardio.__all__)
        for name in shardio.__all__:
            with self.subTest(name=name):
                self.assertTrue(callable(getattr(shardio, name)) or name == "__version__")

    def test_a_name_the_root_exported_in_0_1_0_still_imports_with_a_warning_naming_its_module(self) -> None:
        value, warned = deprecations(lambda: shardio.split_segments)
        from shardio.epoch.order import split_segments
        self.assertIs(value, split_segments)
        self.assertEqual(warned, ["shardio.split_segments is deprecated at the package's root and is removed there in the next "
                                  "release: from shardio.epoch.order import split_segments"])

    def test_a_name_the_root_never_had_is_an_attribute_error(self) -> None:
        with self.assertRaisesRegex(AttributeError, "module 'shardio' has no attribute 'no_such_name'"):
            shardio.no_such_name  # noqa: B018


class SourceTest(unittest.TestCase):
    def test_a_version_manifest_key_outside_a_channel_is_the_version_it_names(self) -> None:
        source = Source("/data/flowers", manifest="versions/v00000002-1a2b3c4d/manifest.json")
        self.assertEqual((source.version, source.manifest), ("v00000002-1a2b3c4d", None))

    def test_each_field_is_checked_where_the_source_is_made_naming_it(self) -> None:
        cases = [
            (dict(location="ftp://host/x"), "scheme ftp:// is not one of"),
            (dict(location="/data", version="v1"), "dataset version 'v1': must be a version id"),
            (dict(location="/data", version="v00000002-1a2b3c4d", manifest="versions/v00000002-1a2b3c4d/manifest.json"),
             "both pin a version; give one"),
            (dict(location="s3://bucket/prefix/", manifest="other.json"), "must be a version's manifest key"),
            (dict(location="/data", index_channel="index"), "index_channel 'index' applies to a sagemaker://<channel> location only"),
            (dict(location="/data", s3={"cache_limit": 1}), "s3 must be an S3Options, got dict"),
            (dict(location="/data", check_crc="no"), "check_crc must be True or False, got 'no'"),
        ]
        for fields, message in cases:
            with self.subTest(fields=fields), self.assertRaisesRegex((ValueError, TypeError), message):
                Source(**fields)

    def test_a_channel_takes_its_index_channel_and_any_manifest_key_of_its_own(self) -> None:
        source = Source("sagemaker://train", index_channel="index", manifest="manifest.json", s3=S3Options())
        self.assertEqual((source.index_channel, source.manifest, source.version), ("index", "manifest.json", None))


class LoaderOptionsTest(unittest.TestCase):
    def test_each_option_is_checked_where_the_options_are_made_naming_it_the_value_and_what_is_allowed(self) -> None:
        cases = [
            (dict(on_bad_record="ignore"), "on_bad_record .* must be one of fail, skip, got 'ignore'"),
            (dict(max_bad_ratio=1.5), "max_bad_ratio .* must be between 0 and 1"),
            (dict(shuffle_buffer=-1), "shuffle_buffer must be an integer of at least 0, got -1"),
            (dict(num_workers=2.5), "num_workers must be an integer of at least 0, got 2.5"),
            (dict(prefetch_factor=0), "prefetch_factor must be an integer of at least 1, got 0"),
            (dict(seed="1"), "seed must be an integer, got '1'"),
            (dict(transform="decode"), "transform must be callable or None, got str"),
            (dict(drop_last=1), "drop_last must be True or False, got 1"),
            (dict(placement=(0, 1)), "placement must be a Placement or None, got tuple"),
        ]
        for fields, message in cases:
            with self.subTest(fields=fields), self.assertRaisesRegex((ValueError, TypeError), message):
                LoaderOptions(**fields)

    def test_replace_checks_the_changed_options_too(self) -> None:
        options = LoaderOptions(seed=3)
        self.assertEqual(options.replace(num_workers=2), LoaderOptions(seed=3, num_workers=2))
        with self.assertRaisesRegex(ValueError, "num_workers must be an integer of at least 0, got -2"):
            options.replace(num_workers=-2)

    def test_every_keyword_of_the_0_1_0_loaders_is_a_field_of_source_s3options_or_loaderoptions(self) -> None:
        # The keywords data_loader and channel_data_loader took in 0.1.0, each declared once now.
        keywords = {"transform", "collate_fn", "version", "num_workers", "seed", "shuffle_buffer", "drop_last", "placement",
                    "resumable", "cache_dir", "cache_limit", "timeout", "attempts", "retry_seconds", "shards_ahead",
                    "index_channel", "input_dir", "on_bad_record", "max_bad_ratio", "check_crc", "manifest", "samples"}
        fields = {field.name for kind in (Source, S3Options, LoaderOptions) for field in dataclasses.fields(kind)}
        self.assertEqual(keywords - fields, set())


@needs_torch
@needs_packed
class DataLoaderTest(unittest.TestCase):
    def test_data_loader_source_batch_size_options_reads_this_ranks_part_as_the_keyword_style_of_0_1_0_did(self) -> None:
        # GIVEN
        root = packed()["tfrecord"]
        keep = list

        # WHEN
        loader, warned = deprecations(lambda: shardio.data_loader(
            Source(root), 4, LoaderOptions(collate_fn=keep, num_workers=0, seed=5, placement=FOUR_RANKS_FIRST)))
        from shardio.torch.dataset import data_loader
        old, old_warned = deprecations(lambda: data_loader(root, 4, collate_fn=keep, num_workers=0, seed=5,
                                                           placement=FOUR_RANKS_FIRST))

        # THEN
        self.assertEqual(warned, [])
        self.assertEqual(names(loader), names(old))
        self.assertIn(len(names(loader)), (packed()["files"] // 4, -(-packed()["files"] // 4)))  # a fourth of the records
        self.assertEqual(old_warned, ["data_loader(location, batch_size, name=value, ...) with keyword options is deprecated "
                                      "and is removed in the next release: call data_loader(Source(location, ...), "
                                      "batch_size, LoaderOptions(...))"])

    def test_a_location_string_is_a_source_with_the_defaults(self) -> None:
        loader = shardio.data_loader(packed()["recordio"], 64, LoaderOptions(collate_fn=list, num_workers=0))
        self.assertEqual(len(names(loader)), packed()["files"])

    def test_channel_data_loader_reads_the_channel_data_loader_of_a_sagemaker_location_with_a_warning(self) -> None:
        # GIVEN: a job's input folder whose channel `train` is the packed dataset (File mode)
        with tempfile.TemporaryDirectory() as input_dir:
            os.makedirs(os.path.join(input_dir, "config"))
            with open(os.path.join(input_dir, "config", "inputdataconfig.json"), "w", encoding="utf-8") as handle:
                json.dump({"train": {"TrainingInputMode": "File"}}, handle)
            os.makedirs(os.path.join(input_dir, "data"))
            os.symlink(packed()["tfrecord"], os.path.join(input_dir, "data", "train"))
            from shardio.torch.dataset import channel_data_loader

            # WHEN
            old, warned = deprecations(lambda: names(channel_data_loader("train", 8, collate_fn=list, num_workers=0,
                                                                         input_dir=input_dir)))
            new = names(shardio.data_loader(Source("sagemaker://train", input_dir=input_dir), 8,
                                            LoaderOptions(collate_fn=list, num_workers=0)))

        # THEN
        self.assertEqual(old, new)
        self.assertEqual(len(new), packed()["files"])
        self.assertEqual(len(warned), 1)
        self.assertRegex(warned[0], r"^channel_data_loader\(location, batch_size, name=value, \.\.\.\) with keyword options is deprecated")

    def test_an_unknown_keyword_is_a_type_error_naming_it_and_the_fields_there_are(self) -> None:
        from shardio.torch.dataset import data_loader
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with self.assertRaisesRegex(TypeError, r"data_loader\(\) got unexpected keyword arguments shuffle: Source has"):
                data_loader(packed()["tfrecord"], 4, shuffle=True)

    def test_a_source_with_source_keywords_is_refused_rather_than_one_of_them_dropped(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with self.assertRaisesRegex(TypeError, r"give version in the Source"):
                shardio.data_loader(Source(packed()["tfrecord"]), 4, version="v00000002-1a2b3c4d")

    def test_shard_dataset_and_make_data_loader_take_the_options_once(self) -> None:
        from shardio.torch.dataset import ShardDataset, make_data_loader
        options = LoaderOptions(collate_fn=list, num_workers=0, shuffle_buffer=0, placement=Placement())
        dataset = ShardDataset(Source(packed()["tfrecord"]).open(Placement(), 0), options)
        loader, warned = deprecations(lambda: make_data_loader(dataset, 16))
        self.assertEqual((warned, loader.num_workers, len(names(loader))), ([], 0, packed()["files"]))
        _, old_warned = deprecations(lambda: ShardDataset(dataset.source, shuffle_buffer=0))
        self.assertRegex(old_warned[0], r"^ShardDataset\(\.\.\.\) with keyword options is deprecated")


if __name__ == "__main__":
    unittest.main()
