"""CRC-32C both ways: natively (the `crc32c` package, Debian's python3-crc32c, which checks shards
streamed from S3) and in pure Python (where the package is not installed): the same values."""
from __future__ import annotations

import importlib.util
import random
import unittest

from shardio.crc32c import crc32c, pure_crc32c

HAS_NATIVE = importlib.util.find_spec("crc32c") is not None


class Crc32cPathsTest(unittest.TestCase):
    def test_pure_python_gives_the_check_value_and_continues_from_a_crc(self) -> None:
        self.assertEqual(pure_crc32c(b"123456789"), 0xE3069283)  # RFC 3720's check value
        self.assertEqual(pure_crc32c(b"56789", pure_crc32c(b"1234")), 0xE3069283)
        self.assertEqual(pure_crc32c(memoryview(bytearray(b"123456789"))), 0xE3069283)

    @unittest.skipUnless(HAS_NATIVE, "the crc32c package (Debian's python3-crc32c, which .ci/run installs) is not installed: "
                                     "only the pure-Python path is checked")
    def test_the_native_path_agrees_with_pure_python_on_any_bytes_and_split(self) -> None:
        rng = random.Random(7)
        for size in (0, 1, 7, 64, 4097):
            data = bytes(rng.randrange(256) for _ in range(size))
            split = rng.randrange(size + 1)
            with self.subTest(size=size):
                self.assertEqual(crc32c(data), pure_crc32c(data))
                self.assertEqual(crc32c(data[split:], crc32c(data[:split])), pure_crc32c(data))
                self.assertEqual(crc32c(bytearray(data)), pure_crc32c(data))


if __name__ == "__main__":
    unittest.main()
