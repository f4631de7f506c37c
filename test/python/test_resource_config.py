"""resourceconfig.json through shardio.source.environment.resource_config(), the one reader of it (train.py's hosts
and instance type): None outside a job, the hosts in order and this one's place inside."""
from __future__ import annotations

import json
import os
import tempfile
import unittest

from shardio.source.environment import current_host, hosts, resource_config


class ResourceConfigTest(unittest.TestCase):
    def test_outside_a_job_there_is_none_and_the_job_helpers_say_so(self) -> None:
        with tempfile.TemporaryDirectory() as input_dir:
            self.assertIsNone(resource_config(input_dir))
            with self.assertRaisesRegex(FileNotFoundError, r"resourceconfig\.json: no SageMaker resource configuration"):
                hosts(input_dir)

    def test_a_job_s_hosts_this_host_and_its_instance_type(self) -> None:
        with tempfile.TemporaryDirectory() as input_dir:
            os.makedirs(os.path.join(input_dir, "config"))
            with open(os.path.join(input_dir, "config", "resourceconfig.json"), "w", encoding="utf-8") as handle:
                json.dump({"current_host": "algo-2", "hosts": ["algo-1", "algo-2", "algo-3"],
                           "current_instance_type": "ml.p4d.24xlarge", "network_interface_name": "eth0"}, handle)
            config = resource_config(input_dir)
            assert config is not None
            self.assertEqual((config.hosts, config.current_host, config.host_index, config.instance_type),
                             (["algo-1", "algo-2", "algo-3"], "algo-2", 1, "ml.p4d.24xlarge"))
            self.assertEqual((hosts(input_dir), current_host(input_dir)), (["algo-1", "algo-2", "algo-3"], "algo-2"))


if __name__ == "__main__":
    unittest.main()
