"""The reading process's heap kept (shardio/epoch/heap.py): on glibc, freed record buffers stay in the
heap instead of going back to the kernel, so the next record's bytes are not page-faulted in again;
SHARDIO_KEEP_HEAP=0 leaves the allocator alone; and the first read of records sets it in the process
that reads. Each case runs in a fresh interpreter: the settings are per process and cannot be undone."""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import subprocess
import sys
import unittest

CONTAINER = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "container"))
_LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
GLIBC = hasattr(_LIBC, "gnu_get_libc_version")
HAS_MALLINFO2 = GLIBC and hasattr(_LIBC, "mallinfo2")

# Free bytes the heap keeps after 24 one-MiB buffers are allocated and freed (glibc's mallinfo2 `fordblks`).
_KEPT_AFTER_FREES = """
import ctypes, ctypes.util, sys
from shardio.epoch.heap import keep_heap
class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
libc.mallinfo2.restype = Mallinfo2
kept = keep_heap()
buffers = [bytearray(2**20) for _ in range(24)]
del buffers
print(kept, libc.mallinfo2().fordblks)
"""


def run_python(code: str, **environment: str) -> str:
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": CONTAINER, **environment})
    if run.returncode != 0:
        raise AssertionError(f"the child failed: {run.stderr}")
    return run.stdout.strip()


class KeepHeapTest(unittest.TestCase):
    @unittest.skipUnless(HAS_MALLINFO2, "glibc's mallinfo2 (glibc 2.33 or later) measures the heap; another C library keeps its own defaults")
    def test_freed_buffers_stay_in_the_heap_and_the_switch_leaves_glibc_alone(self) -> None:
        kept, free = run_python(_KEPT_AFTER_FREES).split()
        left, free_default = run_python(_KEPT_AFTER_FREES, SHARDIO_KEEP_HEAP="0").split()
        self.assertEqual((kept, left), ("True", "False"))
        # 24 MiB freed: kept whole under the 32 MiB trim threshold; glibc's defaults give most of it back.
        self.assertGreaterEqual(int(free), 24 * 2**20)
        self.assertLess(int(free_default), 8 * 2**20)

    @unittest.skipUnless(GLIBC, "the thresholds are glibc's; off glibc nothing is set")
    def test_reading_records_sets_it_in_the_process_that_reads_once(self) -> None:
        out = run_python(
            "import os\n"
            "from shardio.epoch import heap\n"
            "from shardio.epoch.stream import consumer_images\n"
            "from shardio.epoch.split import Placement\n"
            "class Empty:\n"
            "    host_sharded = False\n"
            "    def images(self, consumer, epoch, seed): return iter(())\n"
            "before = heap._kept_in\n"
            "list(consumer_images(Empty(), Placement(), 0))\n"
            "print(before, heap._kept_in == os.getpid(), heap.keep_heap())\n"
        )
        self.assertEqual(out, "None True True")


if __name__ == "__main__":
    unittest.main()
