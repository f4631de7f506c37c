"""The reading process's heap kept, not handed back to the kernel after every record.

A reader allocates each record's bytes (tens of KB to a few MB), hands them on and frees them. With
glibc's defaults a free that leaves more than the trim threshold free at the heap's top gives those
pages back (and a record above the mmap threshold is a fresh mapping of its own), so the next
record's bytes are page-faulted in again, zeroed by the kernel: on a 2-vCPU VM that fault work was
2 to 3.5 times the rest of a bytes-only read (bench/loader-cpu/ab.py, docs/performance.md), the path
the gpu path's workers take. The settings below keep up to `TRIM_THRESHOLD` free in each reading
process (loader workers included) and serve allocations up to `MMAP_THRESHOLD` from the heap. Both
must be set: setting the trim threshold alone freezes glibc's adaptive mmap threshold at 128 KiB,
which made records of 300-500 KB six times slower.

Set once per process, where records are first read (epoch/stream.py). Not glibc (musl, macOS): nothing
is done. `SHARDIO_KEEP_HEAP=0` in the environment leaves the allocator as it is.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
from typing import Optional

TRIM_THRESHOLD = 32 * 2**20
"""Free bytes at the heap's top kept before any is given back: a few batches' records per process."""
MMAP_THRESHOLD = 4 * 2**20
"""Allocations up to this size come from the heap (a record, a block of a shard); larger ones are mapped."""
ENVIRONMENT = "SHARDIO_KEEP_HEAP"

# glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

_kept_in: Optional[int] = None
"""The process that has set them (a forked loader worker sets its own: the settings are inherited, but
checking the pid keeps this honest if a worker was started another way)."""


def keep_heap() -> bool:
    """Sets the thresholds in this process, once; whether they are set (False off glibc or when disabled)."""
    global _kept_in
    if _kept_in == os.getpid():
        return True
    if os.environ.get(ENVIRONMENT, "1") == "0":
        return False
    mallopt = _glibc_mallopt()
    if mallopt is None:
        return False
    # Either setting turns glibc's adaptive thresholds off; mallopt answers 0 for a value it refuses.
    if not (mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)):
        return False
    _kept_in = os.getpid()
    return True


def _glibc_mallopt():
    """glibc's mallopt, or None where the C library is another (no gnu_get_libc_version)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    if not hasattr(libc, "gnu_get_libc_version") or not hasattr(libc, "mallopt"):
        return None
    mallopt = libc.mallopt
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return mallopt
