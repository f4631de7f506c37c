"""The data of the loader benchmarks (bench/loader-cpu, bench/container-gpu): synthetic JPEGs of
ImageNet-like size and detail, and shards of them packed by the library's own CLI."""
from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import time
from typing import List, Optional, Sequence, Tuple

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def _one_thread() -> None:
    # One process per core: each PyTorch process would otherwise start a thread per core (pinned
    # to 8 vCPUs, fewer than 4,000 images in 200 s without this, 10,000 in 16 s with it).
    import torch

    torch.set_num_threads(1)


def _make_image(job: Tuple[str, int]) -> int:
    """One JPEG: a smooth random field plus noise, 250–480 × 300–640 pixels (~90 KB at quality 90)."""
    import torch
    import torchvision

    path, seed = job
    generator = torch.Generator().manual_seed(seed)
    height = int(torch.randint(250, 481, (1,), generator=generator))
    width = int(torch.randint(300, 641, (1,), generator=generator))
    coarse = torch.rand(1, 3, 8, 8, generator=generator)
    image = torch.nn.functional.interpolate(coarse, size=(height, width), mode="bicubic", align_corners=False)[0]
    image = image + 0.08 * torch.randn(3, height, width, generator=generator)
    pixels = (image.clamp(0, 1) * 255).to(torch.uint8)
    data = torchvision.io.encode_jpeg(pixels, quality=90)
    with open(path, "wb") as handle:
        handle.write(bytes(data.numpy()))
    return len(data)


def make_dataset(folder: str, images: int, classes: int) -> None:
    """`images` JPEGs in `classes` class folders under `folder` (made once: a marker beside the folder,
    since the packer takes every file in it for a class member, says how many; another count makes
    them anew)."""
    os.environ["OMP_NUM_THREADS"] = "1"
    done = f"{folder}.complete"
    wanted = f"{images} {classes}\n"
    if os.path.exists(done):
        with open(done, encoding="utf-8") as marker:
            if marker.read() == wanted:
                return
        os.remove(done)
        shutil.rmtree(folder, ignore_errors=True)
    jobs = []
    for i in range(images):
        directory = os.path.join(folder, f"class-{i % classes:03d}")
        os.makedirs(directory, exist_ok=True)
        jobs.append((os.path.join(directory, f"{i:07d}.jpg"), i))
    started = time.perf_counter()
    with multiprocessing.Pool(initializer=_one_thread) as pool:
        total = sum(pool.imap_unordered(_make_image, jobs, chunksize=16))
    with open(done, "w", encoding="utf-8") as marker:
        marker.write(wanted)
    print(f"made {images} JPEGs, {total / images / 1e3:.0f} KB on average, in {time.perf_counter() - started:.0f} s", flush=True)


def training_io_cli(cli: Optional[str] = None) -> List[str]:
    """The command that runs `training-io`: `cli` (a built training-io.js), else the repository's
    dist/ when built, else its TypeScript through ts-node."""
    built = cli or os.path.join(REPO, "dist", "bin", "training-io.js")
    if os.path.exists(built):
        return ["node", built]
    if cli:
        raise SystemExit(f"{cli}: no such file (the built training-io CLI)")
    return [os.path.join(REPO, "node_modules", ".bin", "ts-node"), "--transpile-only", os.path.join(REPO, "bin", "training-io.ts")]


def pack(source: str, output: str, fmt: str, consumers: int, options: Sequence[str] = (), cli: Optional[str] = None) -> Optional[str]:
    """Packs `source` into `output` (kept between runs while it holds as many files as `source`: made
    anew with another --images); returns None, or why it could not (the CLI's own message), for an
    option this CLI lacks."""
    manifest = os.path.join(output, "manifest.json")
    if os.path.exists(manifest):
        with open(manifest, encoding="utf-8") as handle:
            packed = json.load(handle).get("source", {}).get("objects")
        if packed == sum(len(files) for _, _, files in os.walk(source)):
            return None
        shutil.rmtree(output)
    command = [*training_io_cli(cli), "pack", source, output, "--format", fmt, "--consumers", str(consumers), *options]
    run = subprocess.run(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        if options:
            return run.stderr.strip().splitlines()[0] if run.stderr.strip() else f"exit {run.returncode}"
        raise SystemExit(f"training-io pack failed (exit {run.returncode}): {run.stderr}")
    return None
