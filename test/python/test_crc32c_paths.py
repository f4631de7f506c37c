"""CRC-32C both ways: natively (the `crc32c` package, Debian's python3-crc32c, which checks shards
streamed from S3, or the next fast implementation installed) and in pure Python (where none is
installed): the same values; and which implementation is found, in order, as modules are hidden."""
from __future__ import annotations

import importlib.util
import os
import random
import subprocess
import sys
import unittest

from shardio.format.crc32c import crc32c, pure_crc32c
from support import FAST_CRC32C_MODULES

HAS_NATIVE = importlib.util.find_spec("crc32c") is not None
_FOUND = """
import sys
from support import hide_modules
hide_modules(sys.argv[1:])
import shardio
found = sys.modules["shardio.format.crc32c"]
data = bytes(range(256)) * 17
print(found.NATIVE_MODULE, found.crc32c(b"123456789") == 0xE3069283,
      found.crc32c(memoryview(bytearray(data))[5:], found.crc32c(data[:5])) == found.pure_crc32c(data))
"""


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

    def test_the_first_fast_implementation_installed_is_found_and_agrees_with_pure_python(self) -> None:
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.pathsep.join([os.path.join(here, "..", "..", "container"), here])
        for hidden in range(len(FAST_CRC32C_MODULES) + 1):
            left = FAST_CRC32C_MODULES[hidden:]
            installed = [name for name in left if importlib.util.find_spec(name) is not None]
            with self.subTest(hidden=FAST_CRC32C_MODULES[:hidden]):
                run = subprocess.run([sys.executable, "-c", _FOUND, *FAST_CRC32C_MODULES[:hidden]], capture_output=True, text=True,
                                     env=dict(os.environ, PYTHONPATH=path), timeout=120, check=True)
                found = installed[0] if installed else "None"
                self.assertEqual(run.stdout.split(), [found, "True", "True"])


if __name__ == "__main__":
    unittest.main()
