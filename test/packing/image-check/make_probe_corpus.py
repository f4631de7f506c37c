"""Writes the image check's probe corpus into the folder given (one file each, named for what it is),
with Pillow: valid images in every variant the readers decode, and bad inputs made from them by
editing bytes the way real files go wrong. Prints nothing; the test knows the names."""
import io
import struct
import sys
import zlib
from pathlib import Path

from PIL import Image, ImageDraw

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)


def photo(width, height, mode="RGB"):
    """A picture with detail (so that its entropy-coded data is long): gradients and circles."""
    image = Image.new("RGB", (width, height))
    pixels = image.load()
    for y in range(height):
        for x in range(width):
            pixels[x, y] = ((x * 7 + y) % 256, (y * 5 + x * 3) % 256, (x * y) % 256)
    draw = ImageDraw.Draw(image)
    for i in range(0, min(width, height), max(4, min(width, height) // 12)):
        draw.ellipse((i, i // 2, width - i // 3, height - i), outline=(255 - i % 256, i % 256, 128))
    return image.convert(mode)


def jpeg(image, **options):
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", **options)
    return buffer.getvalue()


def png(image, **options):
    buffer = io.BytesIO()
    image.save(buffer, "PNG", **options)
    return buffer.getvalue()


def write(name, data):
    (out / name).write_bytes(data)


def with_sof_size(data, width, height):
    """The same bytes with the frame header's size changed (a header bomb when larger)."""
    for marker in (b"\xff\xc0", b"\xff\xc2"):
        at = data.find(marker)
        if at >= 0:
            return data[:at + 5] + struct.pack(">HH", height, width) + data[at + 9:]
    raise ValueError("no SOF")


def first_scan_data(data):
    return data.index(b"\xff\xda") + 2 + struct.unpack(">H", data[data.index(b"\xff\xda") + 2:][:2])[0]


big = photo(1600, 1200)
small = photo(64, 64)
baseline = jpeg(big, quality=90)
progressive = jpeg(big, quality=90, progressive=True)

# Valid: the readers decode each of these.
write("ok-baseline.jpg", baseline)
write("ok-progressive.jpg", progressive)
write("ok-small.jpg", jpeg(small, quality=75))
write("ok-gray.jpg", jpeg(photo(100, 70, "L")))
write("ok-444.jpg", jpeg(photo(90, 50), subsampling=0))
write("ok-422.jpg", jpeg(photo(90, 51), subsampling=1))
write("ok-restart.jpg", jpeg(photo(200, 120), quality=80, restart_marker_blocks=7) if "restart_marker_blocks" in Image.SAVE.__doc__ or True else b"")
write("resize-only-cmyk.jpg", jpeg(photo(120, 80, "CMYK")))
write("ok-optimized.jpg", jpeg(photo(150, 100), optimize=True))
write("ok-trailing-bytes.jpg", jpeg(small) + b"\x00\x00trailer")
write("ok-rgb.png", png(photo(120, 80)))
write("ok-rgba.png", png(photo(120, 80, "RGBA")))
write("ok-palette.png", png(photo(120, 80, "P")))
write("ok-gray-png.png", png(photo(33, 17, "L")))
write("ok-bilevel.png", png(photo(33, 17, "1")))


# Bad: none of these reach a record.
write("bad-text.jpg", b"These are notes, not a picture.\n")
write("bad-empty.jpg", b"")
write("bad-ten-bytes.jpg", baseline[:10])
write("bad-cut-no-eoi.jpg", baseline[: len(baseline) // 2])
write("bad-cut-with-eoi.jpg", baseline[: len(baseline) // 2] + b"\xff\xd9")
write("bad-progressive-cut-with-eoi.jpg", progressive[: len(progressive) // 2] + b"\xff\xd9")
write("bad-header-bomb.jpg", with_sof_size(jpeg(small, quality=75), 16000, 16000))
write("bad-progressive-header-bomb.jpg", with_sof_size(jpeg(small, quality=75, progressive=True), 16000, 16000))
write("bad-page.html", b"<!DOCTYPE html><html><body>404 Not Found</body></html>")
write("bad-drawing.svg", b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>')
bmp = io.BytesIO()
small.save(bmp, "BMP")
write("bad-image.bmp", bmp.getvalue())
write("bad-jp2-image.jp2", b"\x00\x00\x00\x0cjP  \r\n\x87\n" + bytes(100))
rgb_png = png(photo(120, 80))
write("bad-png-cut.png", rgb_png[: len(rgb_png) // 2])
iend = rgb_png[rgb_png.index(b"IEND") - 4:]
idat = rgb_png.index(b"IDAT") - 4
idat_length = struct.unpack(">I", rgb_png[idat:idat + 4])[0]
cut_stream = rgb_png[idat + 8:idat + 8 + idat_length // 2]
write("bad-png-short-idat.png", rgb_png[:idat] + struct.pack(">I", len(cut_stream)) + b"IDAT" + cut_stream
      + struct.pack(">I", zlib.crc32(b"IDAT" + cut_stream)) + iend)
flipped = bytearray(rgb_png)
flipped[idat + 20] ^= 0xFF
write("bad-png-crc.png", bytes(flipped))
