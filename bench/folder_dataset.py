"""The small-files baseline of the loader benchmarks (bench/loader-cpu, bench/container-gpu): one
file read per sample, as an image-folder dataset does. Imported after the benches put container/
on sys.path."""
from __future__ import annotations

import os
from typing import Any, Callable

from torch.utils.data import Dataset

from shardio.format.records import ImageRecord


class FolderDataset(Dataset):
    """One sample per file under `folder/<class>/`, classes in name order."""

    def __init__(self, folder: str, transform: Callable[[ImageRecord], Any]) -> None:
        classes = sorted(name for name in os.listdir(folder) if not name.startswith("."))
        self.files = [(os.path.join(folder, c, name), label) for label, c in enumerate(classes)
                      for name in sorted(os.listdir(os.path.join(folder, c)))]
        self.transform = transform

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, index: int) -> Any:
        path, label = self.files[index]
        with open(path, "rb") as handle:
            return self.transform(ImageRecord(image=handle.read(), label=label))
