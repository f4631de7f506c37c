"""Decodes every record of a packed TFRecord dataset with Pillow, a decoder independent of the packer's (sharp/libvips).

Usage: describe_records.py <dataset folder>. Prints one JSON object per record: its filename, the
`image/format` feature, the decoder's format, size and mode, and the colour at the centre of each
quarter (to tell whether a rotation was applied and what transparent pixels became). PYTHONPATH
must hold container/ (shardio reads the shards).
"""
import io
import json
import os
import sys

from PIL import Image

from shardio.format.example import parse_example
from shardio.catalog.manifest import read_manifest
from shardio.format.tfrecord import read_tfrecords


def main(dataset: str) -> None:
    manifest = read_manifest(os.path.join(dataset, "manifest.json"))
    for shard in manifest.shards:
        with open(os.path.join(dataset, shard.key), "rb") as stream:
            for record in read_tfrecords(stream, shard.key, check_crc=True):
                features = parse_example(record.payload, shard.key)
                image = Image.open(io.BytesIO(features["image/encoded"][0]))
                image.load()
                width, height = image.size
                quarters = {name: image.getpixel((int(width * x), int(height * y)))
                            for name, (x, y) in {"topLeft": (0.25, 0.25), "topRight": (0.75, 0.25),
                                                 "bottomLeft": (0.25, 0.75), "bottomRight": (0.75, 0.75)}.items()}
                print(json.dumps({
                    "filename": features["image/filename"][0].decode("utf-8"),
                    "formatFeature": features["image/format"][0].decode("utf-8"),
                    "decodedFormat": image.format, "width": width, "height": height, "mode": image.mode,
                    "channels": len(image.getbands()), "quarters": quarters,
                }))


if __name__ == "__main__":
    main(sys.argv[1])
