"""The readers against the real files TensorFlow and dmlc-core wrote, and published vectors."""
from __future__ import annotations

import base64
import io
import os
import random
import struct
import tempfile
import threading
import unittest

from shardio import FormatError
from shardio.format.crc32c import crc32c, mask, masked_crc32c, unmask
from shardio.format.example import parse_example
from shardio.format.recordio import read_recordio, recordio_image, unpack_ir_header
from shardio.format.records import FramedRecord, ShardFormat, sniff_format
from shardio.format.tfrecord import read_tfrecords, tfrecord_image
from shardio.format.example import image_features
from shardio.format.recordio import IR_HEADER, RECORDIO_MAGIC
from shardio.format.records import record_limit
from support import external

MAGIC = struct.pack("<I", RECORDIO_MAGIC)


def tfrecords(data: bytes, **options):
    return list(read_tfrecords(io.BytesIO(data), "test", **options))


def recordio(data: bytes):
    return list(read_recordio(io.BytesIO(data), "test"))


def part(cflag: int, data: bytes) -> bytes:
    """One RecordIO part as dmlc-core writes it."""
    return MAGIC + struct.pack("<I", (cflag << 29) | len(data)) + data + b"\0" * (-len(data) % 4)


class Crc32cTest(unittest.TestCase):
    def test_rfc3720_vectors(self) -> None:
        self.assertEqual(crc32c(b"\0" * 32), 0x8A9136AA)
        self.assertEqual(crc32c(b"\xff" * 32), 0x62A8AB43)
        self.assertEqual(crc32c(bytes(range(32))), 0x46DD794E)
        self.assertEqual(crc32c(bytes(range(31, -1, -1))), 0x113FDB5C)
        self.assertEqual(crc32c(b"123456789"), 0xE3069283)

    def test_continues_from_a_previous_value(self) -> None:
        self.assertEqual(crc32c(b"56789", crc32c(b"1234")), 0xE3069283)

    def test_masked_vectors_of_apache_beam(self) -> None:
        self.assertEqual(masked_crc32c(b"\0" * 32), 0x0FD7FFFA)
        self.assertEqual(masked_crc32c(b"\xff" * 32), 0xF909B029)
        self.assertEqual(masked_crc32c(b"foo"), 0xFEBE8A61)
        self.assertEqual(masked_crc32c(struct.pack("<Q", 3)), 0x0E4999B0)

    def test_unmask_inverts_mask(self) -> None:
        for value in (0, 1, 0xFFFFFFFF, 0x8A9136AA, 0xA282EAD8):
            self.assertEqual(unmask(mask(value)), value)


class TfRecordTest(unittest.TestCase):
    def test_reads_the_tensorflow_vectors_of_apache_beam_with_crc_checks(self) -> None:
        foo_bar = base64.b64decode("AwAAAAAAAACwmUkOZm9vYYq+/gMAAAAAAAAAsJlJDmJhckYA5cg=")
        records = tfrecords(foo_bar, check_crc=True)
        self.assertEqual([(r.offset, r.size, r.payload) for r in records], [(0, 19, b"foo"), (19, 19, b"bar")])

    def test_reads_the_file_tensorflow_wrote_offsets_crcs_and_examples(self) -> None:
        records = tfrecords(external("tensorflow-singles.tfrecords"), check_crc=True)
        self.assertEqual([(r.offset, r.size) for r in records], [(0, 40), (40, 45), (85, 45)])
        features = [parse_example(r.payload, "singles") for r in records]
        self.assertEqual(features[0], {"int_feature": [42]})
        self.assertEqual(features[1], {"float_feature": [struct.unpack("<f", struct.pack("<f", 3.14))[0]]})
        self.assertEqual(features[2], {"byte_feature": [b"@ABCD"]})

    def test_crc_checks_are_on_by_default_name_the_record_and_can_be_turned_off(self) -> None:
        data = bytearray(external("tensorflow-singles.tfrecords"))
        data[40 + 12 + 3] ^= 0x01
        with self.assertRaisesRegex(FormatError, r"^test: record 1 at offset 40: its 29 bytes do not match their CRC-32C, a "
                                                 r"corrupted TFRecord \(a byte changed after packing\); check_crc=False"):
            tfrecords(bytes(data))
        self.assertEqual(len(tfrecords(bytes(data), check_crc=False)), 3)
        stream = io.BytesIO(bytes(data))
        stream.seek(40)  # read from an index's offset: the record is named by its position in the shard
        with self.assertRaisesRegex(FormatError, r"^test: record 7 at offset 40: its 29 bytes do not match"):
            list(read_tfrecords(stream, "test", offset=40, first=7))

    def test_a_corrupted_length_at_offset_0_asks_whether_it_is_a_tfrecord_file(self) -> None:
        with self.assertRaisesRegex(FormatError, r"record 0 at offset 0: its length does not match its CRC-32C, a corrupted "
                                                 r"TFRecord \(is this a TFRecord file\?\)"):
            tfrecords(b"\x03" + b"\0" * 15 + b"foo" + b"\0" * 4)

    def test_a_truncated_record_names_the_offset(self) -> None:
        data = external("tensorflow-singles.tfrecords")
        with self.assertRaisesRegex(FormatError, r"test: truncated TFRecord of 29 bytes at offset 85"):
            tfrecords(data[:-10])
        with self.assertRaisesRegex(FormatError, r"truncated TFRecord header at offset 85"):
            tfrecords(data[:90])

    def test_offset_and_limit_read_from_the_middle(self) -> None:
        data = external("tensorflow-singles.tfrecords")
        stream = io.BytesIO(data)
        stream.seek(40)
        records = list(read_tfrecords(stream, "test", offset=40, limit=1))
        self.assertEqual([(r.offset, r.size) for r in records], [(40, 45)])


def _unchecked_tfrecords(stream, name: str):
    """The length bound alone: with CRCs checked, a bad length header fails its CRC first."""
    return read_tfrecords(stream, name, check_crc=False)


class CorruptLengthTest(unittest.TestCase):
    """A corrupt length header is a FormatError naming the file or stream, the offset and the length,
    found before the reader allocates that many bytes (it was a bare MemoryError, or OverflowError
    on a FIFO)."""

    GOOD = external("tensorflow-singles.tfrecords")[:40]
    """One whole record of 40 bytes, so the bad header lies at offset 40."""

    def bad_header(self, length: int) -> bytes:
        return struct.pack("<QI", length, 0) + b"\0" * 16

    def in_file(self, data: bytes, read, name: str = "part-00000-of-00001.tfrecord") -> None:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, name)
            with open(path, "wb") as handle:
                handle.write(data)
            with open(path, "rb") as handle:
                list(read(handle, path))

    def in_pipe(self, data: bytes, read) -> None:
        """`data` through a real pipe (Pipe mode's FIFOs are pipes): the reader cannot seek or size it."""
        reader, writer = os.pipe()

        def feed() -> None:
            with open(writer, "wb") as stream:
                try:
                    stream.write(data)
                except BrokenPipeError:  # the reader stopped at the bad header
                    pass

        thread = threading.Thread(target=feed, daemon=True)
        thread.start()
        with open(reader, "rb") as stream:
            list(read(stream, "/opt/ml/input/data/train_0"))
        thread.join(10)

    def test_a_tfrecord_length_beyond_the_file_names_the_file_offset_and_length(self) -> None:
        for length in (1 << 40, (1 << 64) - 1):
            with self.subTest(length=length), self.assertRaisesRegex(
                    FormatError, rf"part-00000-of-00001.tfrecord: truncated TFRecord of {length} bytes at offset 40: "
                                 r"only 16 bytes follow its header \(a cut file, or a corrupt length header\)"):
                self.in_file(self.GOOD + self.bad_header(length), _unchecked_tfrecords)

    def test_a_tfrecord_length_beyond_a_records_limit_in_a_stream_names_the_stream_offset_and_length(self) -> None:
        for length in ((128 << 20) + 1, 1 << 40, (1 << 64) - 1):
            with self.subTest(length=length), self.assertRaisesRegex(
                    FormatError, rf"^/opt/ml/input/data/train_0: TFRecord length {length} at offset 40 is more than a record "
                                 r"may hold \(134217728 bytes, the largest shard\): a corrupt length header$"):
                self.in_pipe(self.GOOD + self.bad_header(length), _unchecked_tfrecords)

    def test_a_record_over_128_mib_in_a_stream_is_read_where_the_manifests_largest_shard_holds_it(self) -> None:
        # A file over 128 MiB is packed as a shard of its own: the manifest's largest shard raises the bound.
        length = (128 << 20) + 1
        reader, writer = os.pipe()

        def feed() -> None:
            with open(writer, "wb") as stream:
                stream.write(struct.pack("<QI", length, 0))
                for _ in range(length // (1 << 20)):
                    stream.write(b"\0" * (1 << 20))
                stream.write(b"\0" * (length % (1 << 20)) + b"\0" * 4)

        thread = threading.Thread(target=feed, daemon=True)
        thread.start()
        with open(reader, "rb") as stream:
            sizes = [record.size for record in read_tfrecords(stream, "train_0", max_record=record_limit(200 << 20), check_crc=False)]
        thread.join(10)
        self.assertEqual(sizes, [12 + length + 4])

    def test_a_recordio_part_beyond_the_file_or_a_records_limit_names_the_file_or_stream(self) -> None:
        bad = MAGIC + struct.pack("<I", (1 << 29) - 1) + b"\0" * 16
        with self.assertRaisesRegex(FormatError, rf"part-00000-of-00001.rec: truncated RecordIO part of {(1 << 29) - 1} bytes at offset 12: only 16 bytes"):
            self.in_file(part(0, b"abc") + bad, read_recordio, "part-00000-of-00001.rec")
        with self.assertRaisesRegex(FormatError, rf"train_0: RecordIO part length {(1 << 29) - 1} at offset 12 is more than"):
            self.in_pipe(part(0, b"abc") + bad, read_recordio)


class ExampleTest(unittest.TestCase):
    def test_decodes_negative_int64_and_unpacked_repeated_values(self) -> None:
        minus_one = b"\xff" * 9 + b"\x01"
        int64_list = b"\x08" + minus_one + b"\x08\x05"  # two unpacked values
        float_list = b"\x0d" + struct.pack("<f", 1.5)  # one unpacked float
        example = self.example({"a": b"\x1a" + self.length(int64_list), "b": b"\x12" + self.length(float_list)})
        self.assertEqual(parse_example(example, "x"), {"a": [-1, 5], "b": [1.5]})

    def test_skips_unknown_fields(self) -> None:
        feature = b"\x0a" + self.length(b"\x0a\x02hi")
        entry = b"\x0a\x01k" + b"\x12" + self.length(feature) + b"\x18\x07"  # field 3 varint: unknown
        example = b"\x0a" + self.length(b"\x0a" + self.length(entry)) + b"\x15" + b"\0" * 4
        self.assertEqual(parse_example(example, "x"), {"k": [b"hi"]})

    def test_rejects_a_field_running_past_its_message(self) -> None:
        with self.assertRaisesRegex(FormatError, r"^x: protobuf field 1 of 9 bytes runs past its message$"):
            parse_example(b"\x0a\x09abc", "x")

    IMAGE_KEYS = (b"image/encoded", b"image/class/label", b"image/filename")

    def image_example(self, image: bytes = b"\xff\xd8jpeg", label: bytes = b"\x07", filename: bytes = b"cat/1.jpg") -> bytes:
        """An image record's Example as the packer writes it (a packed int64 label, one bytes value each)."""
        bytes_feature = lambda value: b"\x0a" + self.length(b"\x0a" + self.length(value))  # noqa: E731
        return self.example({"image/encoded": bytes_feature(image), "image/class/label": b"\x1a" + self.length(b"\x0a" + self.length(label)),
                             "image/filename": bytes_feature(filename), "image/format": bytes_feature(b"jpeg")})

    def test_the_direct_scan_reads_the_packers_layout(self) -> None:
        example = self.image_example(label=b"\xff" * 9 + b"\x01")  # -1 takes ten bytes
        self.assertEqual(image_features(example, *self.IMAGE_KEYS), (b"\xff\xd8jpeg", -1, b"cat/1.jpg"))
        without_label = self.example({"image/encoded": b"\x0a" + self.length(b"\x0a\x01x")})
        self.assertEqual(image_features(without_label, *self.IMAGE_KEYS), (b"x", None, None))
        record = tfrecord_image(FramedRecord(offset=0, size=0, payload=example), "x", shard="s", position=3)
        self.assertEqual((record.image, record.label, record.filename, record.shard, record.position),
                         (b"\xff\xd8jpeg", -1, "cat/1.jpg", "s", 3))

    def test_the_direct_scan_leaves_every_other_layout_to_the_general_parser(self) -> None:
        image = b"\x0a" + self.length(b"\x0a\x01x")
        others = {
            "two images": self.example({"image/encoded": b"\x0a" + self.length(b"\x0a\x01x\x0a\x01y")}),
            "an unpacked label": self.example({"image/encoded": image, "image/class/label": b"\x1a\x02\x08\x05"}),
            "a bytes label": self.example({"image/encoded": image, "image/class/label": image}),
            "an empty feature": self.example({"image/encoded": image, "image/filename": b""}),
            "no image": self.example({"image/class/label": b"\x1a\x03\x0a\x01\x05"}),
            "an unknown field": self.example({"image/encoded": image}) + b"\x15" + b"\0" * 4,
            "a cut record": self.image_example()[:-3],
        }
        for name, example in others.items():
            with self.subTest(name):
                self.assertIsNone(image_features(example, *self.IMAGE_KEYS))
        with self.assertRaisesRegex(FormatError, r"^x at offset 0: expected one bytes value in image/encoded, got 2 value\(s\)"):
            tfrecord_image(FramedRecord(offset=0, size=0, payload=others["two images"]), "x")
        unpacked = tfrecord_image(FramedRecord(offset=0, size=0, payload=others["an unpacked label"]), "x")
        self.assertEqual((unpacked.image, unpacked.label), (b"x", 5))

    def test_the_direct_scan_agrees_with_the_general_parser_on_damaged_records(self) -> None:
        # Every byte of a record changed or cut in turn: wherever the scan gives the three features,
        # the general parser (which the reader used before) gives the same ones or refuses the record.
        example = self.image_example()
        generator = random.Random(37)
        damaged = [example[:cut] for cut in range(len(example))]
        damaged += [example[:at] + bytes([generator.randrange(256)]) + example[at + 1:] for at in range(len(example)) for _ in range(8)]
        scanned = 0
        for payload in damaged:
            fast = image_features(payload, *self.IMAGE_KEYS)
            if fast is None:
                continue
            scanned += 1
            try:
                features = parse_example(payload, "x")
            except FormatError:
                continue
            self.assertEqual(features["image/encoded"], [fast[0]], payload)
            self.assertEqual(features.get("image/class/label", [None]), [fast[1]], payload)
            self.assertEqual(features.get("image/filename", [None]), [fast[2]], payload)
        self.assertGreater(scanned, len(example))  # the changed bytes the scan does not read, at least

    @staticmethod
    def length(data: bytes) -> bytes:
        assert len(data) < 128
        return bytes([len(data)]) + data

    def example(self, features: dict) -> bytes:
        entries = b""
        for key, feature in features.items():
            entry = b"\x0a" + self.length(key.encode()) + b"\x12" + self.length(feature)
            entries += b"\x0a" + self.length(entry)
        return b"\x0a" + self.length(entries)


class RecordIoTest(unittest.TestCase):
    def test_reads_the_file_dmlc_core_wrote(self) -> None:
        records = recordio(external("dmlc-sample.rec"))
        self.assertEqual([r.offset for r in records], [52 * i for i in range(10)])
        self.assertEqual(records[-1].size, 64)
        for i, record in enumerate(records, start=1):
            header, labels, data = unpack_ir_header(record.payload, "sample")
            self.assertEqual((header.flag, header.label, header.id, header.id2, labels), (0, float(i % 2), i, 0, ()))
            self.assertEqual(data, f"{i}\n".encode() * 10)
            image = recordio_image(record, "sample")
            self.assertEqual((image.label, image.record_id, image.filename), (i % 2, i, None))

    def test_joins_continuation_parts_with_the_magic_word_between_them(self) -> None:
        # dmlc-core's split of b"ab" MAGIC MAGIC b"cd" (aligned hits at 4 and 8): an empty middle part.
        stream = part(1, b"abcd") + part(2, b"") + part(3, b"cd") + part(0, b"xyz")
        records = recordio(stream)
        self.assertEqual([r.payload for r in records], [b"abcd" + MAGIC + MAGIC + b"cd", b"xyz"])
        self.assertEqual([(r.offset, r.size) for r in records], [(0, 8 + 4 + 8 + 8 + 4), (32, 12)])

    def test_rejects_a_bad_magic_word_and_a_part_out_of_sequence(self) -> None:
        with self.assertRaisesRegex(FormatError, r"expected the RecordIO magic word at offset 12, got 0x00000000"):
            recordio(part(0, b"abc") + b"\0" * 8)
        with self.assertRaisesRegex(FormatError, r"RecordIO part with cflag 3 at offset 0, expected one of \(0, 1\)"):
            recordio(part(3, b"abc"))
        with self.assertRaisesRegex(FormatError, r"truncated RecordIO part header at offset 12"):
            recordio(part(1, b"abcd"))

    def test_unpacks_multi_label_headers(self) -> None:
        payload = IR_HEADER.pack(2, 0.0, 7, 0) + struct.pack("<2f", 1.0, 2.5) + b"data"
        header, labels, data = unpack_ir_header(payload, "x")
        self.assertEqual((header.flag, header.id, labels, data), (2, 7, (1.0, 2.5), b"data"))


class SniffTest(unittest.TestCase):
    def test_tells_the_format_from_the_first_bytes_and_keeps_them(self) -> None:
        for data, expected in ((external("dmlc-sample.rec"), ShardFormat.RECORDIO),
                               (external("tensorflow-singles.tfrecords"), ShardFormat.TFRECORD)):
            shard_format, stream = sniff_format(io.BytesIO(data), "x")
            self.assertIs(shard_format, expected)
            self.assertEqual(stream.read(len(data) + 1), data)

    def test_an_empty_stream_has_no_format(self) -> None:
        self.assertIsNone(sniff_format(io.BytesIO(b""), "x")[0])


class ImageRecordTest(unittest.TestCase):
    def test_a_tfrecord_example_without_image_encoded_is_refused(self) -> None:
        records = tfrecords(external("tensorflow-singles.tfrecords"))
        with self.assertRaisesRegex(FormatError, r"^singles at offset 0: expected one bytes value in image/encoded"):
            tfrecord_image(records[0], "singles")


if __name__ == "__main__":
    unittest.main()
