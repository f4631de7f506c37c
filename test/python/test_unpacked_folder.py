"""What the readers say of a folder that holds no shards: an empty one (a ShardedByS3Key host without a
shard of its own), a folder of images not packed yet, or other files; each gets its own advice."""
from __future__ import annotations

import os
import tempfile
import unittest

from shardio.source.directory import ShardDirectory


class UnpackedFolderTest(unittest.TestCase):
    def refusal(self, files: list) -> str:
        with tempfile.TemporaryDirectory() as folder:
            for name in files:
                os.makedirs(os.path.dirname(os.path.join(folder, name)), exist_ok=True)
                with open(os.path.join(folder, name), "wb") as handle:
                    handle.write(b"x")
            with self.assertRaises(FileNotFoundError) as raised:
                ShardDirectory(folder)
            return str(raised.exception).replace(folder, "<folder>")

    def test_a_folder_of_images_is_told_to_be_packed_first_without_a_sharded_by_s3_key_hint(self) -> None:
        message = self.refusal(["cat/1.jpg", "cat/2.jpg", "dog/3.PNG"])
        self.assertEqual(message, "<folder>: holds images (cat/1.jpg), not packed shards: pack the folder first "
                                  "(npx training-io pack <folder> <output>) and read <output>")
        self.assertNotIn("ShardedByS3Key", message)

    def test_an_empty_folder_is_what_a_sharded_by_s3_key_host_without_a_shard_sees(self) -> None:
        self.assertRegex(self.refusal([]), r"^<folder>: empty, no \.tfrecord or \.rec shards \(a ShardedByS3Key host with no shard")

    def test_other_files_are_named_with_where_a_packed_dataset_has_its_manifest(self) -> None:
        message = self.refusal(["notes.txt", "data.csv"])
        self.assertEqual(message, "<folder>: no .tfrecord or .rec shards among its 2 entries (such as data.csv); a dataset that "
                                  "training-io pack wrote has manifest.json and versions/ at its root")


if __name__ == "__main__":
    unittest.main()
