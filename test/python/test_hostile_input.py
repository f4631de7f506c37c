"""Hostile input to the readers (issue 45): a location or bucket carrying credentials is refused
before any of it is echoed; names are escaped in messages; JSON deeper or larger than the limits
(lib/contract/json-limits.ts) is refused naming the file, as is a manifest that is not a regular
file; a pinned manifest must name the version pinned."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
import unittest

from shardio import FormatError
from shardio.source.directory import ShardDirectory
from shardio.errors import printable, quoted
from shardio.format.index import parse_index
from shardio.catalog.json_limits import MAX_JSON_BYTES, MAX_JSON_DEPTH, JsonLimitError, json_depth
from shardio.source.location import parse_location
from shardio.catalog.manifest import read_manifest
from shardio.source.s3_dataset import S3Options, S3ShardDirectory
from support import needs_packed, packed
from versioned import SECOND, make_versioned



class CredentialsInALocationTest(unittest.TestCase):
    def test_an_s3_location_with_a_user_and_password_is_refused_without_echoing_any_of_it(self) -> None:
        for location in ("s3://User1234:Pass5678@bkt1/raw/", "s3://User1234@bkt1/", "https://User1234:Pass5678@bkt1/x"):
            with self.subTest(location=location), self.assertRaises(ValueError) as refused:
                parse_location(location)
            self.assertRegex(str(refused.exception), r"URL with a user name or password before '@' \(not shown\)")
            self.assertNotRegex(str(refused.exception), "User1234|Pass5678|bkt1")

    def test_a_bucket_name_with_a_user_and_password_is_refused_before_botocore_sees_it(self) -> None:
        cache = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, cache, True)
        with self.assertRaises(ValueError) as refused:
            S3ShardDirectory("User1234:Pass5678@bkt1", "raw/", options=S3Options(cache_dir=cache, attempts=1))
        self.assertNotRegex(str(refused.exception), "User1234|Pass5678|bkt1")


class PrintableTest(unittest.TestCase):
    def test_control_characters_line_breaks_and_bidi_overrides_are_escaped_as_the_cli_escapes_them(self) -> None:
        self.assertEqual(printable("\x1b]0;pwned\x07a\r\nb\tc\x7f\u202e"), "\\x1b]0;pwned\\x07a\\r\\nb\\tc\\x7f\\u{202e}")
        self.assertEqual(printable("café/猫/🐱.jpg"), "café/猫/🐱.jpg")

    def test_a_name_that_was_not_utf8_shows_its_bytes(self) -> None:
        self.assertEqual(printable(os.fsdecode(b"caf\xe9.jpg")), "caf\\xe9.jpg")

    def test_a_long_value_is_cut_saying_how_long_it_was(self) -> None:
        self.assertEqual(quoted("x" * 100_000), f"'{'x' * 200}… (100000 characters)'")


class JsonLimitsTest(unittest.TestCase):
    def setUp(self) -> None:
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.tmp = folder.name

    def test_brackets_in_strings_do_not_count(self) -> None:
        self.assertEqual(json_depth(b'{"a": [1, {"b": "[[[{{{\\"]]]"}]}'), 3)

    def test_a_manifest_200000_levels_deep_is_a_format_error_naming_the_file_not_a_recursion_error(self) -> None:
        path = os.path.join(self.tmp, "manifest.json")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write('{"a":' * 200_000 + "1" + "}" * 200_000)
        with self.assertRaisesRegex(FormatError, rf"^dataset manifest {re.escape(path)}: JSON nested more than {MAX_JSON_DEPTH} levels deep"):
            read_manifest(path)

    def test_a_manifest_over_the_size_limit_is_refused_before_a_byte_is_read(self) -> None:
        path = os.path.join(self.tmp, "manifest.json")
        with open(path, "wb") as handle:
            handle.truncate(MAX_JSON_BYTES + 1)  # sparse: nothing is written, nothing need be read
        with self.assertRaisesRegex(JsonLimitError, rf"^{re.escape(path)}: 256.0 MiB of JSON is more than the 256 MiB allowed"):
            read_manifest(path)

    def test_a_manifest_that_is_a_fifo_is_refused_without_waiting_for_a_writer(self) -> None:
        path = os.path.join(self.tmp, "manifest.json")
        os.mkfifo(path)
        with self.assertRaisesRegex(JsonLimitError, rf"^{re.escape(path)}: not a regular file"):
            read_manifest(path)


class IndexNumbersTest(unittest.TestCase):
    def test_an_index_line_of_other_digits_than_ascii_is_a_format_error_naming_the_file(self) -> None:
        for line in ("\u00b2\t3", "\u0663\t3", "-1\t3"):
            with self.subTest(line=line), self.assertRaisesRegex(FormatError, r"^x\.idx: index line 2: expected two non-negative integers"):
                parse_index(f"0\t0\n{line}\n", "x.idx")


@needs_packed
class PinnedManifestTest(unittest.TestCase):
    def test_a_pinned_manifest_that_names_another_version_is_a_format_error(self) -> None:
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        dataset = make_versioned(packed()["tfrecord"], os.path.join(folder.name, "dataset"))  # type: ignore[arg-type]
        # Version 1's folder holds version 2's manifest.
        shutil.copyfile(os.path.join(dataset.root, dataset.manifest_key(SECOND)), os.path.join(dataset.root, dataset.manifest_key(dataset.first)))
        with self.assertRaisesRegex(FormatError, rf"names version '{SECOND}', not '{dataset.first}', the version pinned"):
            ShardDirectory(dataset.root, manifest=dataset.manifest_key(dataset.first))


if __name__ == "__main__":
    unittest.main()
