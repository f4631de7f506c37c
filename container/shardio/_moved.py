"""The modules' flat paths of 0.1.0 (`shardio.dataset`, `shardio.records`, ...), kept for one release.

An import of an old path finds no file (the module moved, with its history); the finder installed
here answers it instead: it warns once, naming the new path, and gives the module of the new path
itself, so that everything the old path held (private names, monkeypatching) is there."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from typing import Optional, Sequence

_GROUPS = {
    "format": "blocks crc32c example formats index recordio records shard_crc tfrecord",
    "catalog": "dataset_files json_limits layout manifest",
    "source": "channels directory environment location s3_dataset s3_objects shard_cache",
    "pipe_mode": "fifo handoff pipe pipe_ahead pipe_check pipe_copy pipe_frames pipe_splice",
    "epoch": "bad_records metrics order position split stream",
    "torch": "batch_augment checkpoint dataset imagenet images",
}
MOVED = {f"shardio.{name}": f"shardio.{group}.{name}" for group, names in _GROUPS.items() for name in names.split()}
# train.py's own policies: beside it in container/trainer/, not in the readers' package.
MOVED.update({f"shardio.{name}": f"trainer.{name}" for name in ("loader_choice", "prefetch", "step_choice")})


class _MovedLoader(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        warnings.warn(f"{spec.name} is deprecated and is removed in the next release: import {self.new} instead",
                      DeprecationWarning, stacklevel=2)
        try:
            module = importlib.import_module(self.new)
            self.spec = module.__spec__
            return module
        except ModuleNotFoundError as error:
            if error.name != self.new.split(".")[0]:
                raise
            raise ImportError(f"{spec.name} moved to {self.new}, which is train.py's (container/{self.new.replace('.', '/')}.py) "
                              "and not in the readers' package: put container/ on sys.path, or copy the module") from error

    def exec_module(self, module: types.ModuleType) -> None:
        # The module has run already; the import system has given it the old path's spec: its own back.
        module.__spec__ = self.spec


class _MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Optional[Sequence[str]], target: Optional[types.ModuleType] = None
                  ) -> Optional[importlib.machinery.ModuleSpec]:
        new = MOVED.get(fullname)
        return importlib.machinery.ModuleSpec(fullname, _MovedLoader(new)) if new is not None else None


def install() -> None:
    """Answers the old paths from now on in this process (once, however often shardio is reloaded)."""
    if not any(type(finder).__name__ == _MovedFinder.__name__ for finder in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
