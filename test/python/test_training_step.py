"""train.py's training step (#31): the precision and compile choices for every GPU generation (pure
rules), the compiled step's fallback to eager (PyTorch without torch.compile, a compiler that
fails at its first call), checkpoints that load across --compile on/off, the measured `--loader
auto` with its choice saved and reused on resume, and train.py end to end with each flag, on the CPU."""
from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Dict, List

from trainer.step_choice import AMPERE, CompileChoice, choose_compile, choose_precision
from support import HAS_TORCH, needs_packed, needs_torch, packed
from test_torch import CONTAINER, write_channels

if HAS_TORCH:
    import torch

    import train
    from shardio import Placement
    from shardio.torch.checkpoint import save_checkpoint

# (GPU, compute capability, bfloat16 supported) → what auto picks.
GENERATIONS = [
    ("P100", (6, 0), False, ("fp16", True)),
    ("V100", (7, 0), False, ("fp16", True)),
    ("T4", (7, 5), False, ("fp16", True)),
    ("A100", (8, 0), True, ("bf16", False)),
    ("A10G", (8, 6), True, ("bf16", False)),
    ("L4", (8, 9), True, ("bf16", False)),
    ("H100", (9, 0), True, ("bf16", False)),
]


class PrecisionChoiceTest(unittest.TestCase):
    def test_auto_is_bf16_without_a_scaler_from_ampere_on_and_fp16_with_one_before(self) -> None:
        for gpu, capability, bf16, expected in GENERATIONS:
            with self.subTest(gpu=gpu):
                precision = choose_precision("auto", cuda=True, capability=capability, bf16_supported=bf16)
                self.assertEqual((precision.name, precision.scaler), expected)
                self.assertIn(f"compute capability {capability[0]}.{capability[1]}", precision.reason)
        self.assertEqual(AMPERE, (8, 0))

    def test_auto_is_fp32_on_the_cpu_and_where_the_earlier_amp_flag_is_false(self) -> None:
        self.assertEqual(choose_precision("auto", cuda=False).name, "fp32")
        self.assertEqual(choose_precision("auto", cuda=True, capability=(9, 0), bf16_supported=True, amp=False).name, "fp32")

    def test_an_explicit_precision_is_kept_or_refused_naming_the_value_and_what_is_allowed(self) -> None:
        self.assertEqual(choose_precision("fp16", cuda=True, capability=(9, 0), bf16_supported=True).scaler, True)
        self.assertEqual(choose_precision("bf16", cuda=False).name, "bf16")  # CPU autocast
        self.assertEqual(choose_precision("fp32", cuda=True, capability=(9, 0), bf16_supported=True).name, "fp32")
        with self.assertRaisesRegex(ValueError, r"--precision fp16 needs a GPU .*use bf16, fp32 or auto"):
            choose_precision("fp16", cuda=False)
        with self.assertRaisesRegex(ValueError, r"--precision bf16: this GPU \(compute capability 7.0\) has no bfloat16; use fp16"):
            choose_precision("bf16", cuda=True, capability=(7, 0), bf16_supported=False)
        with self.assertRaisesRegex(ValueError, r"--precision fp8: not a precision; use auto, bf16, fp16, fp32"):
            choose_precision("fp8", cuda=True)


class CompileChoiceTest(unittest.TestCase):
    def test_one_gpu_gets_cuda_graphs_with_static_shapes_several_ranks_the_default_mode(self) -> None:
        one = choose_compile("auto", cuda=True, has_compile=True, torch_version="2.11.0")
        self.assertEqual((one.mode, one.static_shapes), ("reduce-overhead", True))
        ddp = choose_compile("auto", cuda=True, has_compile=True, torch_version="2.11.0", ranks=8)
        self.assertEqual((ddp.mode, ddp.static_shapes), ("default", False))
        self.assertIn("8 ranks", ddp.reason)

    def test_eager_without_torch_compile_off_or_on_the_cpu_unless_asked_each_saying_why(self) -> None:
        cases = [
            (dict(requested="auto", cuda=True, has_compile=False, torch_version="1.13.1"), None, "PyTorch 1.13.1 has no torch.compile"),
            (dict(requested="on", cuda=False, has_compile=False, torch_version="1.13.1"), None, "PyTorch 1.13.1 has no torch.compile"),
            (dict(requested="off", cuda=True, has_compile=True, torch_version="2.11.0"), None, "--compile off"),
            (dict(requested="auto", cuda=False, has_compile=True, torch_version="2.11.0"), None, "no GPU"),
            (dict(requested="on", cuda=False, has_compile=True, torch_version="2.11.0"), "default", "on the CPU"),
        ]
        for arguments, mode, reason in cases:
            with self.subTest(**arguments):
                choice = choose_compile(**arguments)
                self.assertEqual(choice.mode, mode)
                self.assertIn(reason, choice.reason)
                self.assertFalse(choice.static_shapes)
        with self.assertRaisesRegex(ValueError, r"--compile max: not a choice; use auto, on, off"):
            choose_compile("max", cuda=True, has_compile=True, torch_version="2.11.0")


class _Compiled(torch.nn.Module if HAS_TORCH else object):  # type: ignore[misc]
    """What torch.compile returns: a module holding the original as `_orig_mod` (its state's keys
    prefixed `_orig_mod.`), here failing at its first `failures` calls as a broken backend would."""

    def __init__(self, model: Any, failures: int) -> None:
        super().__init__()
        self._orig_mod, self.failures, self.calls = model, failures, 0

    def forward(self, images: Any) -> Any:
        self.calls += 1
        if self.calls <= self.failures:
            raise RuntimeError("backend='inductor' raised:\nCompilationError: no C compiler")
        return self._orig_mod(images)


def _model() -> Any:
    torch.manual_seed(0)
    return train.torchvision.models.resnet18(num_classes=3)


def _batches(count: int, size: int = 32) -> List[Any]:
    generator = torch.Generator().manual_seed(1)
    return [(torch.randn(4, 3, size, size, generator=generator), torch.randint(0, 3, (4,), generator=generator))
            for _ in range(count)]


def _trainer(model: Any, log: List[str], compiled: Any = None, compiler: Any = None, precision: Any = None) -> Any:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return train.Trainer(model, optimizer, torch.device("cpu"), precision=precision, compiled=compiled, log=log.append,
                         compiler=compiler)


def _ready(images: Any, labels: Any) -> Any:
    return images, labels


@needs_torch
class CompiledStepTest(unittest.TestCase):
    def test_without_torch_compile_the_step_runs_eager_and_the_log_says_why(self) -> None:
        log: List[str] = []
        compiler = getattr(torch, "compile", None) if hasattr(torch, "compile") else None
        trainer = _trainer(_model(), log, CompileChoice("default", "asked"), compiler=compiler)
        if compiler is not None:
            self.skipTest(f"PyTorch {torch.__version__} has torch.compile: the fallback is tested with a failing compiler below")
        self.assertIs(trainer.forward, trainer.model)
        self.assertEqual(log, [f"compile: the compiled step failed (RuntimeError: PyTorch {torch.__version__} has no "
                               "torch.compile): eager from here on"])
        self.assertEqual(trainer.epoch(_batches(2), _ready, epoch=0, step=0, log=False), 2)

    def test_a_compiled_step_that_fails_at_its_first_call_trains_that_batch_eager_and_every_later_one(self) -> None:
        log: List[str] = []
        compiled: List[_Compiled] = []
        eager_log: List[str] = []
        eager = _trainer(_model(), eager_log)
        trainer = _trainer(_model(), log, CompileChoice("default", "asked"),
                           compiler=lambda model, mode: compiled.append(_Compiled(model, failures=1)) or compiled[0])
        batches = _batches(3)
        self.assertEqual(trainer.epoch(batches, _ready, epoch=0, step=0, log=False), 3)
        eager.epoch(batches, _ready, epoch=0, step=0, log=False)
        self.assertEqual(compiled[0].calls, 1)  # never called again after its failure
        self.assertEqual(log, ["compile: the compiled step failed (RuntimeError: backend='inductor' raised:): eager from here on"])
        for name, tensor in eager.model.state_dict().items():  # the same weights as a run that was eager all along
            self.assertTrue(torch.allclose(trainer.model.state_dict()[name].float(), tensor.float(), atol=1e-5), name)

    def test_a_compiled_step_that_works_logs_its_compile_time_and_checkpoints_without_the_wrappers_prefix(self) -> None:
        log: List[str] = []
        compiled: List[_Compiled] = []
        trainer = _trainer(_model(), log, CompileChoice("default", "asked"),
                           compiler=lambda model, mode: compiled.append(_Compiled(model, failures=0)) or compiled[0])
        trainer.epoch(_batches(2), _ready, epoch=0, step=0, log=False)
        self.assertEqual(compiled[0].calls, 2)
        self.assertEqual(len(log), 1)
        self.assertRegex(log[0], r"^compile: torch.compile\(mode=default\) compiled the step in \d+\.\d s$")
        self.assertTrue(all(key.startswith("_orig_mod.") for key in compiled[0].state_dict()))
        saved = trainer.state_dict(0, 2)["model"]
        self.assertEqual(list(saved), list(_model().state_dict()))

    def test_bf16_autocast_trains_on_the_cpu_and_fp32_has_no_scaler_state(self) -> None:
        for precision in (choose_precision("bf16", cuda=False), choose_precision("auto", cuda=False)):
            with self.subTest(precision=precision.name):
                trainer = _trainer(_model(), [], precision=precision)
                self.assertEqual(trainer.epoch(_batches(2), _ready, epoch=0, step=0, log=False), 2)
                self.assertEqual(trainer.state_dict(0, 2)["scaler"], {})

    def test_the_loaders_trial_puts_back_the_weights_optimizer_and_random_state_it_trained(self) -> None:
        trainer = _trainer(_model(), [])
        trainer.epoch(_batches(2), _ready, epoch=0, step=0, log=False)  # momentum buffers exist
        before = copy.deepcopy(trainer.state_dict(0, 2))
        generator_state = torch.get_rng_state()
        snapshot = train._snapshot(trainer)
        interval = trainer.measure(iter(_batches(6)), _ready, warmup=2, seconds=0.0)
        torch.rand(3)
        self.assertEqual(interval.samples, 4)  # the step after the warm-up: the trial's one measured step
        self.assertFalse(torch.equal(trainer.model.fc.weight, before["model"]["fc.weight"]))
        train._put_back(trainer, snapshot)
        after = trainer.state_dict(0, 2)
        for name, tensor in before["model"].items():
            self.assertTrue(torch.equal(after["model"][name], tensor), name)
        for index, entry in before["optimizer"]["state"].items():
            self.assertTrue(torch.equal(after["optimizer"]["state"][index]["momentum_buffer"], entry["momentum_buffer"]))
        self.assertTrue(torch.equal(torch.get_rng_state(), generator_state))


@needs_torch
class TrainArgumentsTest(unittest.TestCase):
    """train.py's flags: each explained by --help, and a --record_log that cannot be written refused at the start."""

    def test_every_flag_has_a_help_text(self) -> None:
        flags = [action for action in train.argument_parser()._actions if action.option_strings]
        self.assertGreater(len(flags), 30)
        self.assertEqual([action.option_strings[0] for action in flags if not action.help], [])

    def test_a_record_log_in_a_missing_folder_fails_at_the_start_naming_the_folder(self) -> None:
        with tempfile.TemporaryDirectory() as root:
            missing = os.path.join(root, "missing")
            command = [sys.executable, os.path.join(CONTAINER, "train.py"), "--record_log", os.path.join(missing, "records")]
            run = subprocess.run(command, capture_output=True, text=True, timeout=600)
        self.assertEqual(run.returncode, 2, run.stdout + run.stderr)
        self.assertIn(f"--record_log {os.path.join(missing, 'records')}: folder {missing} does not exist", run.stderr)

    def test_a_record_log_in_an_existing_folder_is_accepted(self) -> None:
        with tempfile.TemporaryDirectory() as root:
            self.assertEqual(train.parse_args(["--record_log", os.path.join(root, "records")]).record_log, os.path.join(root, "records"))


@needs_torch
@needs_packed
class TrainFlagsTest(unittest.TestCase):
    """train.py on the CPU with a small ResNet and each new flag."""

    def run_train(self, input_dir: str, *options: str) -> str:
        command = [sys.executable, os.path.join(CONTAINER, "train.py"), "--input_dir", input_dir,
                   "--model_dir", os.path.join(input_dir, "model"), "--arch", "resnet18", "--image_size", "32",
                   "--batch_size", "4", "--num_classes", "3", "--log_interval", "2", "--validation_channel", "none",
                   "--checkpoint_dir", os.path.join(input_dir, "checkpoints"), *options]
        run = subprocess.run(command, capture_output=True, text=True, timeout=600)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        return run.stdout + run.stderr

    def job(self, root: str, name: str) -> str:
        input_dir = os.path.join(root, name)
        write_channels(input_dir, {"train": {"TrainingInputMode": "File"}}, {"num_workers": "2"})
        os.symlink(packed()["tfrecord"], os.path.join(input_dir, "data", "train"))
        return input_dir

    def test_each_precision_and_compile_flag_trains_to_the_end_saying_what_it_runs(self) -> None:
        cases = [
            (("--precision", "bf16", "--compile", "on"), "precision=bf16 (as asked: CPU autocast) compile=off (PyTorch"),
            (("--precision", "fp32", "--compile", "off"), "precision=fp32 (as asked) compile=off (--compile off)"),
            (("--precision", "auto", "--compile", "auto"), "precision=fp32 (no GPU) compile=off (no GPU: eager"),
        ]
        with tempfile.TemporaryDirectory() as root:
            for index, (options, line) in enumerate(cases):
                with self.subTest(options=options):
                    output = self.run_train(self.job(root, f"job-{index}"), "--loader", "cpu", "--max_steps", "3", *options)
                    self.assertIn(line, output)
                    self.assertIn("done steps=3", output)

    def test_fp16_on_the_cpu_fails_naming_the_value_and_what_is_allowed(self) -> None:
        with tempfile.TemporaryDirectory() as root:
            command = [sys.executable, os.path.join(CONTAINER, "train.py"), "--input_dir", self.job(root, "job"),
                       "--num_classes", "3", "--precision", "fp16"]
            run = subprocess.run(command, capture_output=True, text=True, timeout=600)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("--precision fp16 needs a GPU", run.stderr)

    def test_checkpoints_load_across_compile_on_and_off_and_with_a_compiled_wrappers_keys(self) -> None:
        with tempfile.TemporaryDirectory() as root:
            job = self.job(root, "job")
            self.run_train(job, "--compile", "on", "--max_steps", "3")
            checkpoints = os.path.join(job, "checkpoints")
            saved = torch.load(os.path.join(checkpoints, "step-000000003.pt"))
            self.assertFalse([key for key in saved["model"] if "_orig_mod" in key])
            # A checkpoint written by a compiled module's own state_dict (an earlier or another script's).
            prefixed = dict(saved, model={f"_orig_mod.{key}": value for key, value in saved["model"].items()}, step=4)
            with open(os.path.join(checkpoints, "step-000000003.rank-0.json"), encoding="utf-8") as handle:
                position = json.load(handle)
            save_checkpoint(checkpoints, 4, 0, prefixed, position)
            output = self.run_train(job, "--compile", "off", "--max_steps", "6")
            self.assertIn("resumed from", output)
            self.assertIn("step=4 at record 12 of epoch 0", output)
            args = train.parse_args(["--checkpoint_dir", checkpoints, "--input_dir", job])
            model = train.torchvision.models.resnet18(num_classes=3)
            train.restore(args, Placement(), torch.device("cpu"), model, None)
            latest = torch.load(os.path.join(checkpoints, "step-000000006.pt"))["model"]
        for name, tensor in model.state_dict().items():
            self.assertTrue(torch.equal(latest[name], tensor), name)

    def test_auto_measures_each_cpu_usable_path_keeps_the_fastest_and_reuses_the_choice_on_resume(self) -> None:
        with tempfile.TemporaryDirectory() as root:
            job, plain = self.job(root, "auto"), self.job(root, "plain")
            records = os.path.join(root, "records")
            output = self.run_train(job, "--loader", "auto", "--loader_trial_seconds", "1", "--max_steps", "5",
                                    "--record_log", records + "-auto")
            self.assertIn("loader auto: measuring cpu, gpu for 1 s in all after 10 steps each (the table's guess: cpu", output)
            table = re.findall(r"^loader auto: (cpu|gpu) +([0-9.]+) +([0-9.]+)( +<- chosen)?$", output, re.M)
            self.assertIn("cpu", [row[0] for row in table])
            measured = {kind: float(rate) for kind, rate, _wait, _mark in table}
            winner = [kind for kind, _rate, _wait, mark in table if mark]
            self.assertEqual(winner, [max(measured, key=measured.get)])  # type: ignore[arg-type]
            self.assertRegex(output, rf"loader={winner[0]} workers=2 \(measured: {winner[0]} \d+ samples/s")
            with open(os.path.join(job, "checkpoints", "step-000000005.rank-0.json"), encoding="utf-8") as handle:
                saved: Dict[str, Any] = json.load(handle)["loader_choice"]
            self.assertEqual((saved["kind"], saved["machine"]["workers"], saved["machine"]["device"]), (winner[0], 2, "cpu"))
            self.assertEqual([trial["kind"] for trial in saved["trials"]], [row[0] for row in table])

            resumed = self.run_train(job, "--loader", "auto", "--loader_trial_seconds", "1", "--max_steps", "8",
                                     "--record_log", records + "-auto")
            self.assertNotIn("loader auto: measuring", resumed)
            self.assertIn(f"loader={winner[0]} workers=2 (measured before on this machine, saved with the checkpoint: measured: ",
                          resumed)
            # The trial trains nothing the job keeps: the same records in the same batches as an unmeasured run
            # stopped and resumed at the same steps.
            for steps in ("5", "8"):
                self.run_train(plain, "--loader", winner[0], "--max_steps", steps, "--record_log", records + "-plain")
            with open(records + "-auto.rank-0", encoding="utf-8") as auto, open(records + "-plain.rank-0", encoding="utf-8") as reference:
                self.assertEqual(auto.read(), reference.read())
            # ... and the same weights: the trial's steps, optimizer state and random draws were put back.
            weights = [torch.load(os.path.join(folder, "checkpoints", "step-000000008.pt"))["model"] for folder in (job, plain)]
            for name, tensor in weights[1].items():
                self.assertTrue(torch.equal(weights[0][name], tensor), name)


if __name__ == "__main__":
    unittest.main()
