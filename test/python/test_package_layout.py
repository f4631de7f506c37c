"""The package's layout: the modules' flat paths of 0.1.0 keep working for one release, each with a
DeprecationWarning, as the very module of its new home (shardio/_moved.py); `import shardio` imports
no PyTorch."""
from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import warnings

import shardio
import shardio._moved
from support import needs_torch

CONTAINER = os.path.dirname(os.path.dirname(os.path.abspath(shardio.__file__)))
# Old flat path -> new home. The trainer's are train.py's (container/trainer/), not the readers'.
MOVED = {
    "crc32c": "shardio.format.crc32c", "records": "shardio.format.records", "tfrecord": "shardio.format.tfrecord",
    "recordio": "shardio.format.recordio", "example": "shardio.format.example", "index": "shardio.format.index",
    "formats": "shardio.format.formats", "blocks": "shardio.format.blocks", "shard_crc": "shardio.format.shard_crc",
    "layout": "shardio.catalog.layout", "manifest": "shardio.catalog.manifest", "json_limits": "shardio.catalog.json_limits",
    "dataset_files": "shardio.catalog.dataset_files", "directory": "shardio.source.directory",
    "location": "shardio.source.location", "channels": "shardio.source.channels", "s3_dataset": "shardio.source.s3_dataset",
    "s3_objects": "shardio.source.s3_objects", "shard_cache": "shardio.source.shard_cache",
    "environment": "shardio.source.environment", "pipe": "shardio.pipe_mode.pipe", "pipe_ahead": "shardio.pipe_mode.pipe_ahead",
    "pipe_check": "shardio.pipe_mode.pipe_check", "pipe_copy": "shardio.pipe_mode.pipe_copy",
    "pipe_frames": "shardio.pipe_mode.pipe_frames", "pipe_splice": "shardio.pipe_mode.pipe_splice",
    "fifo": "shardio.pipe_mode.fifo", "handoff": "shardio.pipe_mode.handoff", "order": "shardio.epoch.order",
    "split": "shardio.epoch.split", "position": "shardio.epoch.position", "stream": "shardio.epoch.stream",
    "bad_records": "shardio.epoch.bad_records", "metrics": "shardio.epoch.metrics",
}
MOVED_WITH_TORCH = {
    "dataset": "shardio.torch.dataset", "images": "shardio.torch.images", "batch_augment": "shardio.torch.batch_augment",
    "imagenet": "shardio.torch.imagenet", "checkpoint": "shardio.torch.checkpoint",
    "loader_choice": "trainer.loader_choice", "step_choice": "trainer.step_choice", "prefetch": "trainer.prefetch",
}


IMPORTING_LINE = "<the user's import>"


def import_old(name: str):
    """shardio.<name> imported afresh, with the warnings it raised."""
    sys.modules.pop(f"shardio.{name}", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(f"import shardio.{name}", IMPORTING_LINE, "exec"), {})
    return sys.modules[f"shardio.{name}"], [w for w in caught if issubclass(w.category, DeprecationWarning)]


class OldPathsTest(unittest.TestCase):
    def check_moved(self, moved: dict) -> None:
        for old, new in moved.items():
            with self.subTest(old=old):
                module, deprecations = import_old(old)
                self.assertIs(module, importlib.import_module(new))
                self.assertEqual([str(w.message) for w in deprecations],
                                 [f"shardio.{old} is deprecated and is removed in the next release: import {new} instead"])
                # The warning points at the importing line, here, not at the import machinery.
                self.assertEqual(deprecations[0].filename, IMPORTING_LINE)

    def test_every_flat_path_of_the_standard_library_readers_is_its_new_module_with_a_deprecation_warning(self) -> None:
        self.check_moved(MOVED)

    @needs_torch
    def test_every_flat_path_of_the_pytorch_modules_and_train_pys_policies_too(self) -> None:
        self.check_moved(MOVED_WITH_TORCH)

    def test_the_old_paths_are_those_of_0_1_0_and_no_module_file_is_left_at_the_root(self) -> None:
        self.assertEqual(set(shardio._moved.MOVED), {f"shardio.{name}" for name in {**MOVED, **MOVED_WITH_TORCH}})
        folder = os.path.dirname(shardio.__file__)
        self.assertEqual({name for name in os.listdir(folder) if name.endswith(".py")},
                         {"__init__.py", "_moved.py", "contract.py", "dali.py", "errors.py"})

    def test_a_moved_module_keeps_its_own_name_and_spec(self) -> None:
        module, _ = import_old("records")
        self.assertEqual((module.__name__, module.__spec__.name), ("shardio.format.records", "shardio.format.records"))

    def test_a_trainer_module_without_container_trainer_is_an_import_error_that_says_where_it_went(self) -> None:
        # GIVEN: the readers alone, as the wheel or includeReaders ships them
        with tempfile.TemporaryDirectory() as alone:
            shutil.copytree(os.path.dirname(shardio.__file__), os.path.join(alone, "shardio"))

            # WHEN
            run = subprocess.run([sys.executable, "-B", "-c", "import shardio.step_choice"], capture_output=True, text=True,
                                 timeout=120, env={**os.environ, "PYTHONPATH": alone}, cwd=alone)

        # THEN
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("ImportError: shardio.step_choice moved to trainer.step_choice, which is train.py's", run.stderr)


class LayersTest(unittest.TestCase):
    def test_each_group_imports_only_the_groups_before_it(self) -> None:
        # ARCHITECTURE.md "Layers": torch/ alone imports PyTorch, and nothing imports torch/ but itself.
        order = ["format", "catalog", "epoch", "pipe_mode", "source", "torch"]
        folder = os.path.dirname(shardio.__file__)
        found = []
        for position, group in enumerate(order):
            for name in sorted(os.listdir(os.path.join(folder, group))):
                if name.endswith(".py"):
                    with open(os.path.join(folder, group, name), encoding="utf-8") as handle:
                        imported = set(re.findall(r"^\s*from \.\.(\w+)", handle.read(), re.M)) & set(order)
                    found += [f"{group}/{name} imports {other}" for other in sorted(imported) if order.index(other) > position]
        self.assertEqual(found, [])


class ImportTest(unittest.TestCase):
    def test_import_shardio_imports_no_pytorch_and_warns_nothing(self) -> None:
        script = "import sys, warnings; warnings.simplefilter('error'); import shardio; print('torch' in sys.modules)"
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                             env={**os.environ, "PYTHONPATH": CONTAINER}, cwd="/")
        self.assertEqual((run.returncode, run.stdout.strip()), (0, "False"), run.stderr)


if __name__ == "__main__":
    unittest.main()
