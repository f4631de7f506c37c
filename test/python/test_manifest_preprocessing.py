"""The reader accepts a manifest that records the packer's image preprocessing (issue 26) and hands it out."""
import json
import os
import tempfile
import unittest

from shardio.errors import FormatError
from shardio.catalog.manifest import read_manifest

PREPROCESSING = {"shorterSide": 256, "longerSide": None, "jpegQuality": 90, "keepGrayscale": False,
                 "sharp": "0.35.5", "libvips": "8.18.7"}


def manifest(**fields):
    document = {"version": 2, "datasetVersion": "v00000001-0abf3aff", "format": "tfrecord", "labels": {"cat": 0},
                "classes": 1, "records": 1,
                "shards": [{"key": "versions/v00000001-0abf3aff/shards/part-00000-of-00001.tfrecord", "records": 1}]}
    document.update(fields)
    return document


class ManifestPreprocessingTest(unittest.TestCase):
    def read(self, document):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "manifest.json")
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(document, handle)
            return read_manifest(path)

    def test_the_preprocessing_is_read_as_recorded(self) -> None:
        self.assertEqual(self.read(manifest(preprocessing=PREPROCESSING)).preprocessing, PREPROCESSING)

    def test_a_manifest_without_preprocessing_has_none(self) -> None:
        self.assertIsNone(self.read(manifest()).preprocessing)

    def test_a_preprocessing_that_is_not_an_object_is_refused_naming_the_field(self) -> None:
        with self.assertRaisesRegex(FormatError, r"manifest\.json: preprocessing must be an object, got 'jpeg'"):
            self.read(manifest(preprocessing="jpeg"))


if __name__ == "__main__":
    unittest.main()
