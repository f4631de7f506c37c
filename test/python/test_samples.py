"""Multi-part samples (lib/contract/sample-parts.ts): the manifest's `sample` field, records read as samples
with every part, decoded by kind and batched; every sample once an epoch, resumable as the (image, label)
records are; the classification readers read the same dataset unchanged.

The datasets are written here (bad_dataset.py `write_dataset`, `sample_example`) in the packer's layout."""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import tempfile
import unittest
from typing import Any, Dict, List

from shardio import FormatError, PipeSource, Placement, ShardDirectory, consumer_images, pipe_path
from shardio.contract import MAX_JSON_DEPTH
from shardio.manifest import read_manifest
from shardio.samples import KEY, LABEL, RECORD, SHARD, Sample, SampleDescription, read_samples
from support import HAS_TORCH, needs_torch
from test_pipe import feed, read_bytes

if HAS_TORCH:
    import torch
    from PIL import Image

    from bad_dataset import VERSION, inputs, jpeg, write_dataset
    from shardio import BadRecordError
    from shardio.collate import collate_part, collate_samples
    from shardio.dataset import ShardDataset, data_loader, make_data_loader
    from shardio.images import EncodedBatch
    from shardio.sample_decode import SampleDecoder

SAMPLE_FIELD = {"parts": [{"name": "jpg", "kind": "image"}, {"name": "json", "kind": "json"},
                          {"name": "mask.png", "kind": "image"}, {"name": "txt", "kind": "text"}],
                "required": ["jpg", "json", "mask.png"], "imagePart": "jpg"}
COUNT = 23


def mask(index: int) -> bytes:
    """A grey PNG whose pixels are the sample's class indexes (0 and index % 5)."""
    image = Image.new("L", (6, 4), 0)
    image.putpixel((1, 2), index % 5)
    output = io.BytesIO()
    image.save(output, format="PNG")
    return output.getvalue()


def parts(index: int) -> Dict[str, bytes]:
    """Sample `index`'s parts: a JPEG, boxes as JSON (index % 3 + 1 of them), a mask, and a caption but in every third."""
    found = {"jpg": jpeg(index), "json": json.dumps({"boxes": [[index, box, 4, 4] for box in range(index % 3 + 1)]}).encode(),
             "mask.png": mask(index)}
    if index % 3:
        found["txt"] = f"sample {index} ✓".encode()
    return found


def samples(count: int = COUNT, bad: Dict[int, Dict[str, bytes]] = {}):  # noqa: B006 - read only
    return [(f"train/{index:04d}", {**parts(index), **bad.get(index, {})}, index % 2) for index in range(count)]


@needs_torch
class SampleDatasetTest(unittest.TestCase):
    def setUp(self) -> None:
        self.root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.root)
        self.packed = write_dataset(os.path.join(self.root, "samples"), samples(), shards=3, sample=SAMPLE_FIELD)

    def loader(self, workers: int, **options: Any):
        return data_loader(self.packed.root, 4, num_workers=workers, placement=Placement(), shuffle_buffer=5, seed=3,
                           samples=True, **options)

    def test_the_manifest_describes_the_samples(self) -> None:
        manifest = read_manifest(os.path.join(self.packed.root, "manifest.json"))
        self.assertEqual(manifest.sample, SampleDescription(
            kinds={"jpg": "image", "json": "json", "mask.png": "image", "txt": "text"},
            required=("jpg", "json", "mask.png"), image_part="jpg"))

    def test_each_record_is_a_sample_with_every_part_its_key_shard_record_and_label(self) -> None:
        source = read_samples(ShardDirectory(self.packed.root))
        read = list(consumer_images(source, Placement(), 0))
        self.assertEqual(sorted(sample[KEY] for sample in read), [f"train/{index:04d}" for index in range(COUNT)])
        for sample in read:
            index = int(sample[KEY].split("/")[1])
            self.assertIsInstance(sample, Sample)
            self.assertEqual({part: sample[part] for part in sample.parts}, parts(index))
            self.assertEqual((sample[SHARD], sample[RECORD]), self.packed.where(sample[KEY]))
            self.assertEqual(sample[LABEL], index % 2)

    def test_the_classification_readers_read_the_same_records_as_image_and_label(self) -> None:
        read = list(consumer_images(ShardDirectory(self.packed.root), Placement(), 0))
        self.assertEqual(sorted((record.filename, record.image, record.label) for record in read),
                         sorted((f"{key}.jpg", files["jpg"], label) for key, files, label in samples()))

    def test_every_sample_once_an_epoch_decoded_by_kind_and_batched_with_0_and_2_workers(self) -> None:
        for workers in (0, 2):
            with self.subTest(workers=workers):
                loader = self.loader(workers)
                for _epoch in range(2):
                    keys: List[str] = []
                    for batch in loader:
                        keys += batch[KEY]
                        self.assertEqual(batch[LABEL].tolist(), [int(key[-4:]) % 2 for key in batch[KEY]])
                        self.assertEqual([(shard, record) for shard, record in zip(batch[SHARD], batch[RECORD].tolist())],
                                         [self.packed.where(key) for key in batch[KEY]])
                        for key, image, boxes, mask_pixels, caption in zip(batch[KEY], batch["jpg"], batch["json"],
                                                                           batch["mask.png"], batch["txt"]):
                            index = int(key[-4:])
                            self.assertEqual(tuple(image.shape), (3, 30 + index % 5, 40 + index % 7))
                            self.assertEqual(boxes, {"boxes": [[index, box, 4, 4] for box in range(index % 3 + 1)]})
                            self.assertEqual(mask_pixels.dtype, torch.uint8)
                            self.assertEqual((tuple(mask_pixels.shape), int(mask_pixels[0, 2, 1])), ((1, 4, 6), index % 5))
                            self.assertEqual(caption, f"sample {index} ✓" if index % 3 else None)
                    self.assertEqual(sorted(keys), [f"train/{index:04d}" for index in range(COUNT)])

    def test_restored_mid_epoch_it_hands_out_the_rest_of_the_epoch_at_the_same_and_another_worker_count(self) -> None:
        whole = self.loader(2, resumable=True)
        whole.set_epoch(1)
        expected = [key for batch in whole for key in batch[KEY]]
        for workers in (2, 1):
            with self.subTest(resumed_with=workers):
                first = self.loader(2, resumable=True)
                first.set_epoch(1)
                seen: List[str] = []
                for index, batch in enumerate(first):
                    seen += batch[KEY]
                    if index == 2:
                        break
                resumed = self.loader(workers, resumable=True)
                resumed.load_state_dict([first.state_dict()])
                resumed.set_epoch(1)
                rest = [key for batch in resumed for key in batch[KEY]]
                self.assertEqual(sorted(seen + rest), sorted(expected))
                self.assertEqual(len(seen + rest), COUNT)

    def test_a_pipe_mode_stream_hands_out_every_sample_with_its_parts_naming_the_fifo(self) -> None:
        data = b"".join(read_bytes(os.path.join(self.packed.root, key)) for key in self.packed.shard_keys)
        data_dir = os.path.join(self.root, "data")
        os.makedirs(data_dir)
        feed(pipe_path(data_dir, "train", 0), data)
        source = PipeSource(data_dir, "train", local_consumers=1, host_sharded=False, host_count=1, timeout=10,
                            fanout_dir=os.path.join(self.root, "fanout"),
                            manifest=read_manifest(os.path.join(self.packed.root, "manifest.json")))
        read = list(consumer_images(read_samples(source), Placement(), 0))
        self.assertEqual([sample[KEY] for sample in read], [key for key, _files, _label in samples()])
        self.assertEqual([{part: sample[part] for part in sample.parts} for sample in read], [files for _key, files, _label in samples()])
        self.assertEqual({sample[SHARD] for sample in read}, {pipe_path(data_dir, "train", 0)})
        self.assertEqual([sample[RECORD] for sample in read], list(range(COUNT)))

    def test_same_size_images_are_stacked_and_a_users_collate_replaces_the_default(self) -> None:
        loader = self.loader(0, collate_fn=lambda batch: [sample[KEY] for sample in batch])
        self.assertEqual(sorted(key for batch in loader for key in batch), [f"train/{index:04d}" for index in range(COUNT)])
        masks = collate_part([torch.zeros(1, 4, 6, dtype=torch.uint8)] * 3)
        self.assertEqual(tuple(masks.shape), (3, 1, 4, 6))
        self.assertEqual(collate_part([torch.zeros(1, 4, 6), torch.zeros(1, 4, 7)])[1].shape, (1, 4, 7))

    def test_the_gpu_path_leaves_the_image_part_encoded_in_one_buffer_and_decodes_the_others(self) -> None:
        batch = next(iter(self.loader(1, transform=SampleDecoder(encoded_image=True))))
        self.assertIsInstance(batch["jpg"], EncodedBatch)
        images = [bytes(image.numpy()) for image in batch["jpg"].images()]
        self.assertEqual(images, [parts(int(key[-4:]))["jpg"] for key in batch[KEY]])
        self.assertEqual(batch["jpg"].name(0), f"part 'jpg' of record {batch[RECORD][0]} of {batch[SHARD][0]} "
                                               f"(sample {batch[KEY][0]})")
        self.assertIsInstance(batch["json"][0], dict)
        self.assertIsInstance(batch["mask.png"], torch.Tensor)


@needs_torch
class SampleErrorTest(unittest.TestCase):
    def setUp(self) -> None:
        self.root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.root)

    def write(self, bad: Dict[int, Dict[str, bytes]], *, sample: dict = SAMPLE_FIELD, name: str = "bad"):
        return write_dataset(os.path.join(self.root, name), samples(12, bad), shards=2, sample=sample)

    def test_a_part_that_cannot_be_decoded_fails_naming_part_record_shard_and_key_or_is_skipped(self) -> None:
        deep = b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1)
        for part, data, reason in (("json", b"{not json", "not JSON"), ("json", deep, f"nested more than {MAX_JSON_DEPTH}"),
                                   ("txt", b"\xff\xfe", "text that is not UTF-8"), ("mask.png", b"not a png", "UnidentifiedImageError")):
            with self.subTest(part=part, reason=reason):
                packed = self.write({7: {part: data}}, name=f"bad-{part}-{len(data)}")
                shard, position = packed.where("train/0007")
                with self.assertRaises(BadRecordError) as raised:
                    list(data_loader(packed.root, 4, num_workers=1, placement=Placement(), samples=True))
                message = str(raised.exception)
                self.assertRegex(message, re.escape(f"record {position} of shard {shard} (input train/0007, dataset version "
                                                    f"{VERSION}) cannot be decoded: ") + r"\w+Error: " + re.escape(
                                                    f"part '{part}' of record {position} of {shard} (sample train/0007)"))
                self.assertIn(reason, message)
                skipped = data_loader(packed.root, 4, num_workers=1, placement=Placement(), samples=True, on_bad_record="skip",
                                      max_bad_ratio=0.1)
                self.assertEqual(sorted(key for batch in skipped for key in batch[KEY]),
                                 [f"train/{index:04d}" for index in range(12) if index != 7])

    def test_a_sample_without_a_required_part_or_with_an_unlisted_one_is_refused_naming_it(self) -> None:
        without = dict(SAMPLE_FIELD, required=["jpg", "json", "mask.png", "txt"])
        packed = self.write({}, sample=without, name="without")
        with self.assertRaisesRegex(FormatError, r"part-0000[01]-of-00002.tfrecord: record \d+ at offset \d+ \(sample "
                                                 r"'train/00(00|03|06|09)'\): lacks its part 'txt' \(feature txt\), which the "
                                                 r"manifest's sample.required says every sample has"):
            list(consumer_images(read_samples(ShardDirectory(packed.root)), Placement(), 0))
        unlisted = dict(SAMPLE_FIELD, parts=SAMPLE_FIELD["parts"][:3], required=["jpg"])
        packed = self.write({}, sample=unlisted, name="unlisted")
        with self.assertRaisesRegex(FormatError, r"holds the feature\(s\) 'txt', which the manifest's sample.parts "
                                                 r"\(jpg, json, mask.png\) does not list"):
            list(consumer_images(read_samples(ShardDirectory(packed.root)), Placement(), 0))

    def test_samples_without_an_image_part_are_read_by_their_part_names(self) -> None:
        text_only = {"parts": [{"name": "json", "kind": "json"}, {"name": "txt", "kind": "text"}], "required": ["json"]}
        files = [(key, {part: data for part, data in found.items() if part in ("json", "txt")}, label)
                 for key, found, label in samples(9)]
        packed = write_dataset(os.path.join(self.root, "text-only"), files, shards=2, sample=text_only)
        read = list(consumer_images(read_samples(ShardDirectory(packed.root)), Placement(), 0))
        self.assertEqual(sorted((sample[KEY], {part: sample[part] for part in sample.parts}) for sample in read),
                         [(key, found) for key, found, _label in files])

    def test_samples_of_a_one_part_dataset_are_refused_naming_its_manifest(self) -> None:
        packed = write_dataset(os.path.join(self.root, "one-part"), inputs(8, {}), shards=2)
        with self.assertRaisesRegex(ValueError, r"samples=True: dataset manifest .*one-part/manifest.json describes no multi-part "
                                                r"samples .*read it with samples=False"):
            data_loader(packed.root, 4, num_workers=0, placement=Placement(), samples=True)

    def test_a_manifests_sample_field_is_checked_naming_the_field(self) -> None:
        for sample, field in (("jpg", "sample must be an object with a list of parts"),
                              (dict(SAMPLE_FIELD, parts=[{"name": "jpg", "kind": "picture"}]), r"sample.parts\[0\].kind must be one of"),
                              (dict(SAMPLE_FIELD, parts=[{"name": "a__b", "kind": "bytes"}]), r"sample.parts\[0\].name must be"),
                              (dict(SAMPLE_FIELD, required=["cls"]), "sample.required must list parts of sample.parts"),
                              (dict(SAMPLE_FIELD, imagePart="json"), "sample.imagePart must name a part of kind image")):
            with self.subTest(field=field):
                packed = self.write({}, sample=sample, name=f"field-{len(os.listdir(self.root))}")
                with self.assertRaisesRegex(FormatError, f"dataset manifest .*manifest.json: {field}"):
                    read_manifest(os.path.join(packed.root, "manifest.json"))


@needs_torch
class CollateTest(unittest.TestCase):
    def test_a_part_some_samples_lack_is_a_list_with_none_and_integers_are_one_tensor(self) -> None:
        batch = collate_samples([{"a": 1, "b": "x"}, {"a": 2}])
        self.assertEqual(batch["a"].tolist(), [1, 2])
        self.assertEqual(batch["b"], ["x", None])

    def test_the_classification_loader_of_a_multi_part_dataset_still_hands_out_image_and_label(self) -> None:
        root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, root)
        packed = write_dataset(os.path.join(root, "samples"), samples(8), shards=2, sample=SAMPLE_FIELD)
        dataset = ShardDataset(ShardDirectory(packed.root), placement=Placement(),
                               transform=lambda record: (record.filename, record.label))
        read = [pair for batch in make_data_loader(dataset, 3, num_workers=1, collate_fn=list) for pair in batch]
        self.assertEqual(sorted(read), [(f"train/{index:04d}.jpg", index % 2) for index in range(8)])


if __name__ == "__main__":
    unittest.main()
