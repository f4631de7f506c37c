"""Decodes every record of a packed TFRecord dataset as the training readers do, in one process.

Usage: decode_records.py <dataset folder>. Prints one JSON object per record: its filename and the
problems found, if any: Pillow's open + load raising, torchvision.io.decode_image (RGB) raising, or
libjpeg's "premature end of data segment" warning on stderr during the decode (the case where
libjpeg fills the rest of the picture with grey and does not fail). PYTHONPATH must hold container/.
"""
import io
import json
import os
import sys
import tempfile

import torch
import torchvision
from PIL import Image
from torchvision.io import ImageReadMode

from shardio.format.example import parse_example
from shardio.catalog.manifest import read_manifest
from shardio.format.tfrecord import read_tfrecords


def problems(data: bytes, stderr: tempfile.TemporaryFile) -> list:
    found = []
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except Exception as error:  # noqa: BLE001 - any failure of the reader is what this reports
        found.append(f"Pillow: {error}")
    before = os.lseek(stderr.fileno(), 0, os.SEEK_END)
    try:
        torchvision.io.decode_image(torch.frombuffer(bytearray(data), dtype=torch.uint8), mode=ImageReadMode.RGB)
    except Exception as error:  # noqa: BLE001
        found.append(f"torchvision: {error}")
    os.lseek(stderr.fileno(), before, os.SEEK_SET)
    warnings = os.read(stderr.fileno(), 1 << 16).decode("utf-8", "replace")
    if "premature end" in warnings.lower():
        found.append(f"libjpeg: {warnings.strip()}")
    return found


def main(dataset: str) -> None:
    manifest = read_manifest(os.path.join(dataset, "manifest.json"))
    stderr = tempfile.TemporaryFile()
    saved = os.dup(2)
    os.dup2(stderr.fileno(), 2)
    try:
        for shard in manifest.shards:
            with open(os.path.join(dataset, shard.key), "rb") as stream:
                for record in read_tfrecords(stream, shard.key, check_crc=True):
                    features = parse_example(record.payload, shard.key)
                    print(json.dumps({"filename": features["image/filename"][0].decode("utf-8"),
                                      "problems": problems(features["image/encoded"][0], stderr)}), flush=True)
    finally:
        os.dup2(saved, 2)


if __name__ == "__main__":
    main(sys.argv[1])
