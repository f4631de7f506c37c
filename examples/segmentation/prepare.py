"""The Penn-Fudan Pedestrian dataset's layout, made WebDataset-style keyed files for `training-io pack`.

Penn-Fudan (https://www.cis.upenn.edu/~jshi/ped_html/) holds `PNGImages/<name>.png` and, for each,
`PedMasks/<name>_mask.png`: an instance mask, one 8-bit value a pixel, 0 the background and 1..n
each pedestrian. This script writes, for each image, the three parts of one sample:

    <output>/<name>.png        the image, its bytes unchanged
    <output>/<name>.mask.png   the instance mask as an 8-bit grayscale PNG: the same values, read
                               alike by every decoder (a palette image converted to RGB would not be)
    <output>/<name>.json       {"width", "height", "boxes": [[x0, y0, x1, y1], ...],
                                "labels": [1, ...], "instances": [1, ...]}: a box per instance,
                               from its mask's pixels (x1, y1 exclusive), label 1 (a pedestrian), and
                               the mask value each box is of

ready for `npx training-io pack <output> <packed> --parts png,mask.png,json --labels none`.
An image without its mask, a mask without its image, another file in those folders, sizes that
differ or a name with a dot (the dot would split the sample's key) is an error naming the file,
before anything is written: nothing is left out quietly.

    python prepare.py PennFudanPed/ prepared/

Needs Pillow (python3-pil on Debian, a dependency of torchvision)."""
import argparse
import json
import os
import shutil
import sys
from typing import Dict, List

from PIL import Image

IMAGES, MASKS, MASK_SUFFIX = "PNGImages", "PedMasks", "_mask.png"
PEDESTRIAN = 1


def instance_boxes(mask: Image.Image) -> Dict[int, List[int]]:
    """Each instance value of a grey mask (0 is the background) and the box of its pixels, x1 and y1 exclusive."""
    values = sorted(value for _, value in mask.getcolors(256) if value != 0)
    return {value: list(mask.point(lambda pixel, value=value: 255 if pixel == value else 0).getbbox()) for value in values}


def annotation(mask: Image.Image) -> dict:
    """The JSON part of a sample: its size, and a box, a label and an instance value per pedestrian."""
    boxes = instance_boxes(mask)
    return {"width": mask.width, "height": mask.height, "boxes": list(boxes.values()),
            "labels": [PEDESTRIAN] * len(boxes), "instances": list(boxes)}


def more(names: List[str]) -> str:
    """What an error adds after naming the first of `names`."""
    return f" (and {len(names) - 1} more)" if len(names) > 1 else ""


def pairs(root: str) -> Dict[str, str]:
    """The sample keys of a Penn-Fudan folder, each with its image's name; an unpaired file is an error."""
    image_names, mask_names = sorted(os.listdir(os.path.join(root, IMAGES))), sorted(os.listdir(os.path.join(root, MASKS)))
    strays = [os.path.join(root, IMAGES, name) for name in image_names if not name.lower().endswith(".png")]
    strays += [os.path.join(root, MASKS, name) for name in mask_names if not name.endswith(MASK_SUFFIX)]
    if strays:
        raise SystemExit(f"{strays[0]} is neither an image (<name>.png in {IMAGES}/) nor a mask (<name>{MASK_SUFFIX} in {MASKS}/)"
                         f"{more(strays)}")
    images = {name[:-len(".png")]: name for name in image_names}
    masks = {name[:-len(MASK_SUFFIX)] for name in mask_names}
    unpaired = sorted(set(images) - masks)
    if unpaired:
        raise SystemExit(f"{os.path.join(root, IMAGES, images[unpaired[0]])} has no mask "
                         f"{os.path.join(root, MASKS, unpaired[0] + MASK_SUFFIX)}{more(unpaired)}")
    unpaired = sorted(masks - set(images))
    if unpaired:
        raise SystemExit(f"{os.path.join(root, MASKS, unpaired[0] + MASK_SUFFIX)} has no image "
                         f"{os.path.join(root, IMAGES, unpaired[0] + '.png')}{more(unpaired)}")
    dotted = sorted(key for key in images if "." in key)
    if dotted:
        raise SystemExit(f"{os.path.join(root, IMAGES, images[dotted[0]])}: a dot in the name would end the sample's key "
                         f"there (WebDataset's rule); rename it{more(dotted)}")
    return images


def checked(root: str, key: str, name: str) -> None:
    """Refuses a sample whose mask is not its image's size or not one 8-bit value a pixel (Pillow reads the headers only)."""
    image_path, mask_path = os.path.join(root, IMAGES, name), os.path.join(root, MASKS, key + MASK_SUFFIX)
    with Image.open(image_path) as image, Image.open(mask_path) as mask:
        if image.size != mask.size:
            raise SystemExit(f"{mask_path} is {mask.width}x{mask.height}, its image {image_path} {image.width}x{image.height}")
        if mask.mode not in ("P", "L"):
            raise SystemExit(f"{mask_path} is a {mask.mode} image, not an instance mask (one 8-bit value a pixel)")


def prepare(root: str, output: str) -> int:
    """Writes every sample's three parts under `output`, once every sample is checked; the number of samples."""
    images = pairs(root)
    for key, name in sorted(images.items()):
        checked(root, key, name)
    os.makedirs(output, exist_ok=True)
    for key, name in sorted(images.items()):
        with Image.open(os.path.join(root, MASKS, key + MASK_SUFFIX)) as mask:
            instances = Image.frombytes("L", mask.size, mask.tobytes())  # the values, without the palette's colours
        shutil.copyfile(os.path.join(root, IMAGES, name), os.path.join(output, f"{key}.png"))
        instances.save(os.path.join(output, f"{key}.mask.png"))
        with open(os.path.join(output, f"{key}.json"), "w") as out:
            json.dump(annotation(instances), out)
    return len(images)


def main(argv: List[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", help="the Penn-Fudan folder (PNGImages/, PedMasks/)")
    parser.add_argument("output", help="the folder of keyed files to pack")
    args = parser.parse_args(argv)
    for folder in (IMAGES, MASKS):
        if not os.path.isdir(os.path.join(args.source, folder)):
            raise SystemExit(f"{args.source} has no {folder}/ folder: not the Penn-Fudan layout")
    print(f"prepared {prepare(args.source, args.output)} samples in {args.output}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
