"""The container's loader sizing: TrainingInstance.sizeDataLoaders' rule (test/instances/training-instance.test.ts
has the same cases), used when a job does not pass num_workers."""
from __future__ import annotations

import os
import tempfile
import unittest
from unittest import mock

from shardio.source.environment import LoaderSizing, size_loaders, sized_dali_threads, sized_workers

GIB = 2**30


class SizeLoadersTest(unittest.TestCase):
    def test_workers_are_vcpus_per_process_minus_one(self) -> None:
        # ml.p3dn.24xlarge: 96 vCPUs, 768 GiB, 8 processes → 12 per process → 11, not 95
        self.assertEqual(size_loaders(96, 768 * GIB, 8), LoaderSizing(workers=11, dali_threads=11))
        # ml.g4dn.12xlarge: 48 vCPUs, 192 GiB, 4 processes
        self.assertEqual(size_loaders(48, 192 * GIB, 4), LoaderSizing(workers=11, dali_threads=11))

    def test_memory_caps_the_workers_but_not_the_dali_threads(self) -> None:
        # 64 vCPUs and 16 GiB, one process: 16 / 2 GiB = 8 workers, 63 threads
        self.assertEqual(size_loaders(64, 16 * GIB, 1), LoaderSizing(workers=8, dali_threads=63))
        self.assertEqual(size_loaders(64, 16 * GIB, 1, memory_per_worker_bytes=4 * GIB).workers, 4)

    def test_at_least_one_worker(self) -> None:
        # ml.g5.xlarge with 4 processes: 1 vCPU each
        self.assertEqual(size_loaders(4, 16 * GIB, 4), LoaderSizing(workers=1, dali_threads=1))
        self.assertEqual(size_loaders(8, 1 * GIB, 1).workers, 1)

    def test_impossible_inputs_are_refused(self) -> None:
        for vcpus, memory, processes in ((4, 16 * GIB, 0), (4, 16 * GIB, 5), (4, 0, 1)):
            with self.subTest(vcpus=vcpus, memory=memory, processes=processes):
                with self.assertRaises(ValueError):
                    size_loaders(vcpus, memory, processes)


class SizedWorkersTest(unittest.TestCase):
    def setUp(self) -> None:
        self.input_dir = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.input_dir, "config"))

    def test_the_jobs_hyperparameters_win(self) -> None:
        with mock.patch.dict(os.environ, {"SM_HP_NUM_WORKERS": "5", "SM_HP_DALI_THREADS": "7"}):
            self.assertEqual(sized_workers(self.input_dir), 5)
            self.assertEqual(sized_dali_threads(self.input_dir), 7)
        with mock.patch.dict(os.environ, {"SM_HP_NUM_WORKERS": "5"}):
            os.environ.pop("SM_HP_DALI_THREADS", None)
            self.assertEqual(sized_dali_threads(self.input_dir), 5)

    def test_outside_a_job_the_rule_runs_on_this_machine_per_local_process(self) -> None:
        env = {"LOCAL_WORLD_SIZE": "4", "WORLD_SIZE": "4"}
        with mock.patch.dict(os.environ, env), mock.patch("os.cpu_count", return_value=48), \
                mock.patch("os.sysconf", side_effect=lambda name: {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": 192 * GIB // 4096}[name]):
            os.environ.pop("SM_HP_NUM_WORKERS", None)
            os.environ.pop("SM_HP_DALI_THREADS", None)
            self.assertEqual(sized_workers(self.input_dir), 11)
            self.assertEqual(sized_dali_threads(self.input_dir), 11)

    def test_refuses_to_guess_when_the_machine_says_nothing(self) -> None:
        with mock.patch.dict(os.environ, {}), mock.patch("os.cpu_count", return_value=None):
            os.environ.pop("SM_HP_NUM_WORKERS", None)
            with self.assertRaisesRegex(RuntimeError, "cannot size the data loaders.*pass num_workers"):
                sized_workers(self.input_dir)


if __name__ == "__main__":
    unittest.main()
