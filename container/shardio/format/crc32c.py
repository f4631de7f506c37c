"""CRC-32C (Castagnoli) and TensorFlow's masked form.

Natively where a fast implementation is installed, the first of: the `crc32c` package (Debian's
python3-crc32c, PyPI's crc32c), `google_crc32c` (its C extension; Google's client libraries bring
it) and `awscrt` (the AWS Common Runtime: boto3[crt], AWS CLI v2, Debian's python3-awscrt), each
some GB/s: what checking every record as it is read needs (check_crc, on by default). The SageMaker
PyTorch training images install none of them by name (aws/deep-learning-containers,
pytorch/training/docker/2.6/py3/cu126/Dockerfile.gpu: boto3, awscli<2, s3torchconnector, sagemaker),
and a code tarball cannot pip-install in an isolated subnet; there a shard whose manifest lists its
CRC-32 is checked whole with `zlib.crc32` instead (GB/s, standard library: shard_crc.py), and only
shards of manifests packed before that are checked here in pure Python, about 10 MB/s.
"""
from __future__ import annotations

import logging
from typing import Callable, Optional, Union

Buffer = Union[bytes, bytearray, memoryview]


def _fast_crc32c() -> tuple[Optional[Callable[[Buffer, int], int]], Optional[str]]:
    """The first fast CRC-32C installed, continuing from a CRC like `crc32c`, and its module's name."""
    try:
        from crc32c import crc32c as package  # python3-crc32c; absolute import, not this module
        return package, "crc32c"
    except ImportError:
        pass
    try:
        import google_crc32c
        if google_crc32c.implementation != "python":  # its pure-Python fallback is no faster than ours
            # Its extension takes read-only bytes ("y#"): a view of a reused block is copied (memcpy, GB/s).
            return lambda data, crc: google_crc32c.extend(crc, data if isinstance(data, bytes) else bytes(data)), "google_crc32c"
    except ImportError:
        pass
    try:
        from awscrt.checksums import crc32c as crt
        return crt, "awscrt"
    except ImportError:
        return None, None


_native_crc32c, NATIVE_MODULE = _fast_crc32c()
NATIVE = _native_crc32c is not None
"""Whether CRC-32C is computed natively (GB/s), by NATIVE_MODULE."""
_LOG = logging.getLogger("shardio.crc32c")
_warned = [False]


def warn_if_slow() -> None:
    """Logs once per process that CRCs are checked in pure Python (about 10 MB/s per process): a
    reader that is about to (check_crc, the default, on a stream or shards whose manifest lists no
    CRC-32) says so rather than slowing an epoch without a word."""
    if NATIVE or _warned[0]:
        return
    _warned[0] = True
    _LOG.warning("no fast CRC-32C is installed (the crc32c, google_crc32c or awscrt package): record CRCs are checked "
                 "in pure Python, about 10 MB/s per process; `pip install crc32c` (Debian: python3-crc32c) checks them "
                 "natively, a dataset packed again lists each shard's CRC-32, which is checked with zlib instead, or "
                 "check_crc=False (train.py --check_crc false) leaves them unchecked")


_POLYNOMIAL = 0x82F63B78  # reflected 0x1EDC6F41
_MASK_DELTA = 0xA282EAD8


def _table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLYNOMIAL if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_TABLE = _table()


def crc32c(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """CRC-32C of `data`, continuing from `crc` (the value of the bytes before it)."""
    if _native_crc32c is not None:
        # Any buffer as it is (the packages take bytes-like objects): a record's payload is a view of its block.
        return int(_native_crc32c(data, crc))
    return pure_crc32c(data, crc)


def pure_crc32c(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """`crc32c` in pure Python: where no fast implementation is installed."""
    table = _TABLE
    crc ^= 0xFFFFFFFF
    for byte in bytes(data):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def mask(crc: int) -> int:
    """TensorFlow's record CRC: rotate right by 15 bits and add a constant (crc32c.h Mask)."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def unmask(masked: int) -> int:
    """The CRC a masked value was made from (crc32c.h Unmask)."""
    rotated = (masked - _MASK_DELTA) & 0xFFFFFFFF
    return ((rotated >> 17) | (rotated << 15)) & 0xFFFFFFFF


def masked_crc32c(data: bytes | bytearray | memoryview) -> int:
    """What a TFRecord stores after its length and after its data."""
    return mask(crc32c(data))
