"""The loader paths train.py chooses between (cpu, hybrid, gpu), run on the CPU: the batched
augmentation (batch_augment.py), the hybrid workers' decode-only transform, the prefetcher that
prepares batch n+1 while n is consumed, the `--loader auto` rule, and train.py on each path."""
from __future__ import annotations

import dataclasses
import glob
import io
import os
import tempfile
import threading
import unittest
from typing import Any, List

from support import HAS_TORCH, needs_packed, needs_torch, packed
import test_torch

from shardio.format.records import ImageRecord
from trainer.loader_choice import KEEPS_UP, LoaderChoice, Trial, choice_record, choose_loader, gpu_demand, pick, requested_kind
from trainer.loader_choice import saved_choice, trial_order, trial_table

if HAS_TORCH:
    import torch
    from torchvision.transforms import functional as TF

    from shardio.torch.batch_augment import BatchAugment, GpuJpegDecoder, decode_jpegs, pad_batch, random_resized_crop_boxes
    from shardio.torch.imagenet import IMAGENET_MEAN, IMAGENET_STD
    from shardio.epoch.bad_records import BadRecordError
    from shardio.torch.images import RATIO, SCALE, CpuDecodeOnly, CpuTrainTransform, EncodedBatch, collate_encoded, collate_padded, encoded, record_name
    from trainer.prefetch import Prefetcher

IMAGES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "images")


def fixture_records() -> List[ImageRecord]:
    """The three real JPEGs of test/fixtures/images (64x36, 48x48, 40x30), labels 0, 1, 2."""
    records = []
    for label, path in enumerate(sorted(glob.glob(os.path.join(IMAGES, "*.jpg")))):
        with open(path, "rb") as handle:
            records.append(ImageRecord(image=handle.read(), label=label, filename=os.path.basename(path)))
    return records


def mixed_records() -> List[ImageRecord]:
    """The fixture JPEGs with the second one as a PNG (the pack-time check admits PNGs), each named
    as a shard's record is."""
    from PIL import Image

    records = fixture_records()
    png = io.BytesIO()
    with Image.open(io.BytesIO(records[1].image)) as image:
        image.convert("RGB").save(png, format="PNG")
    records[1] = dataclasses.replace(records[1], image=png.getvalue(), filename="green-48x48.png")
    return [dataclasses.replace(record, shard="part-00000-of-00002.tfrecord", position=index)
            for index, record in enumerate(records)]


class _Records:
    """A map-style dataset of records as `encoded` hands them over, with their names (--record_log)."""

    def __init__(self, records: List[ImageRecord]) -> None:
        self.records = [dataclasses.replace(r, position=i) for i, r in enumerate(records)]

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, index: int) -> Any:
        return (*encoded(self.records[index]), self.records[index].filename)


def normalized_bounds():
    low = min((0 - m) / s for m, s in zip(IMAGENET_MEAN, IMAGENET_STD))
    high = max((1 - m) / s for m, s in zip(IMAGENET_MEAN, IMAGENET_STD))
    return low - 1e-4, high + 1e-4


@needs_torch
class BatchAugmentTest(unittest.TestCase):
    def test_crop_boxes_lie_inside_each_image_with_torchvisions_area_and_ratio_or_the_central_fallback(self) -> None:
        generator = torch.Generator().manual_seed(3)
        sizes = torch.randint(8, 700, (2000, 2), generator=generator)
        sizes[:5] = torch.tensor([[10, 2000], [2000, 10], [1, 1], [300, 300], [375, 500]])
        boxes = random_resized_crop_boxes(sizes, generator)
        widths, heights = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
        self.assertTrue(bool((boxes[:, :2] >= 0).all()))
        self.assertTrue(bool((boxes[:, 2] <= sizes[:, 1]).all() and (boxes[:, 3] <= sizes[:, 0]).all()))
        self.assertTrue(bool((widths >= 1).all() and (heights >= 1).all()))
        self.assertEqual(boxes[:, 0].tolist(), boxes[:, 0].round().tolist())  # whole pixels, as torchvision's
        area = widths * heights / (sizes[:, 0] * sizes[:, 1])
        drawn = (area >= SCALE[0] - 0.02) & (area <= SCALE[1])
        self.assertGreater(float(drawn.float().mean()), 0.95)
        # The very narrow images cannot fit a drawn box: a central crop at the ratio's bound.
        self.assertEqual(boxes[0].tolist(), [993.0, 0.0, 1006.0, 10.0])  # 10 high: 13 wide (4/3), centred
        self.assertEqual(boxes[1].tolist(), [0.0, 993.0, 10.0, 1006.0])

    def test_a_crop_is_the_boxes_pixels_resized_as_torchvisions_resized_crop_does(self) -> None:
        # GIVEN a smooth image, and a seed whose first box we read back
        image = torch.nn.functional.interpolate(torch.rand(1, 3, 6, 8, generator=torch.Generator().manual_seed(1)) * 255,
                                                size=(120, 160), mode="bicubic", align_corners=False).clamp(0, 255).round()
        sizes = torch.tensor([[120, 160]])
        box = random_resized_crop_boxes(sizes, torch.Generator().manual_seed(7)).int()[0].tolist()
        # WHEN
        augment = BatchAugment(32, seed=7)
        out = augment(image.to(torch.uint8), sizes)
        # THEN the same crop through torchvision, normalized
        left, top, right, bottom = box
        expected = TF.resized_crop(image, top, left, bottom - top, right - left, [32, 32], antialias=True)
        mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1) * 255
        std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1) * 255
        expected = (expected - mean) / std
        # (flipped or not: the flip is drawn after the box)
        error = min(float((out - expected).abs().mean()), float((out - expected.flip(-1)).abs().mean()))
        self.assertLess(error, 0.05)  # mean error under ~3 of 255 grey levels

    def test_a_batch_is_float_channels_last_in_the_normalized_range_and_repeats_with_its_seed(self) -> None:
        decoded = decode_jpegs(collate_encoded([encoded(r) for r in fixture_records()])[0], torch.device("cpu"))
        batch, sizes = pad_batch(decoded)
        self.assertEqual((tuple(batch.shape), batch.dtype), ((3, 3, 48, 64), torch.uint8))
        self.assertEqual(sizes.tolist(), [[36, 64], [48, 48], [30, 40]])
        first = BatchAugment(24, seed=5)(batch, sizes)
        self.assertEqual((tuple(first.shape), first.dtype), ((3, 3, 24, 24), torch.float32))
        self.assertTrue(first.is_contiguous(memory_format=torch.channels_last))
        low, high = normalized_bounds()
        self.assertTrue(bool((first >= low).all() and (first <= high).all()))
        self.assertTrue(torch.equal(first, BatchAugment(24, seed=5)(batch, sizes)))
        self.assertFalse(torch.equal(first, BatchAugment(24, seed=6)(batch, sizes)))

    def test_the_gpu_decoder_on_the_cpu_decodes_pads_and_augments_the_batch_in_one_step(self) -> None:
        records = fixture_records()
        images, labels, names = collate_encoded([(*encoded(r), r.filename) for r in records])
        out = GpuJpegDecoder(16, torch.device("cpu"), seed=2)(images)
        self.assertEqual(tuple(out.shape), (3, 3, 16, 16))
        self.assertEqual((labels.tolist(), names), ([0, 1, 2], [r.filename for r in records]))
        decoded = pad_batch(decode_jpegs(images, torch.device("cpu")))
        self.assertTrue(torch.equal(out, BatchAugment(16, seed=2)(*decoded)))

    def test_the_gpu_decoder_sends_only_jpegs_to_the_batched_decode_and_decodes_any_other_record_on_the_side(self) -> None:
        # GIVEN the fixture JPEGs with a PNG of the second one between them (the pack-time check admits PNGs)
        from torchvision.io import ImageReadMode, decode_image

        records = mixed_records()
        batch, _ = collate_encoded([encoded(record) for record in records])
        batched: List[int] = []

        def batch_decode(jpegs: List[Any]) -> List[Any]:  # stands in for nvJPEG: JPEGs only, in one call
            batched.append(len(jpegs))
            for data in jpegs:
                self.assertEqual(bytes(data[:2].tolist()), b"\xff\xd8")
            return [decode_image(data, mode=ImageReadMode.RGB) for data in jpegs]

        # WHEN
        decoded = decode_jpegs(batch, torch.device("cpu"), decode_batch=batch_decode)

        # THEN one batched call for the two JPEGs, the PNG decoded beside it, every image in its place
        self.assertEqual(batched, [2])
        expected = [decode_image(torch.frombuffer(bytearray(r.image), dtype=torch.uint8), mode=ImageReadMode.RGB) for r in records]
        self.assertEqual([tuple(image.shape) for image in decoded], [(3, 36, 64), (3, 48, 48), (3, 30, 40)])
        for got, want in zip(decoded, expected):
            self.assertTrue(torch.equal(got, want))

    def test_a_batch_crosses_from_a_worker_as_one_buffer_and_splits_into_views_in_order_with_its_names(self) -> None:
        # GIVEN mixed JPEG/PNG records read by a DataLoader worker process, with --record_log's names
        dataset = _Records(mixed_records() * 3)
        records = dataset.records
        loader = torch.utils.data.DataLoader(dataset, batch_size=len(records), num_workers=1, collate_fn=collate_encoded)

        # WHEN the batch comes over from the worker
        batch, labels, logged = next(iter(loader))

        # THEN one uint8 tensor holds every image's bytes end to end, the images are views of it, in order
        self.assertIsInstance(batch, EncodedBatch)
        self.assertEqual((batch.data.dtype, batch.data.dim(), len(batch)), (torch.uint8, 1, len(records)))
        self.assertEqual(batch.data.numel(), sum(len(r.image) for r in records))
        self.assertTrue(batch.data.is_shared())  # written into shared memory by the worker's collate: one segment
        self.assertEqual(batch.lengths.tolist(), [len(r.image) for r in records])
        images = batch.images()
        storage = batch.data.storage().data_ptr()
        for image, record in zip(images, records):
            self.assertEqual(image.storage().data_ptr(), storage)  # a view, not a copy
            self.assertEqual(bytes(image.numpy()), record.image)
        self.assertEqual(batch.starts_with(b"\xff\xd8"), [True, False, True] * 3)
        self.assertEqual(labels.tolist(), [r.label for r in records])
        self.assertEqual(batch.names, [record_name(r) for r in records])
        self.assertEqual(logged, [r.filename for r in records])
        self.assertIn("record 4 of part-00000-of-00002.tfrecord (input green-48x48.png)", batch.names[4])

    def test_an_image_that_cannot_be_decoded_fails_the_batch_naming_its_record(self) -> None:
        # GIVEN a batch whose second JPEG is cut short, decoded by a batched stand-in that fails as nvJPEG does (whole batch)
        from torchvision.io import ImageReadMode, decode_image

        records = fixture_records()
        broken = dataclasses.replace(records[1], image=records[1].image[:200], shard="part-00003.tfrecord", position=17)
        batch, _ = collate_encoded([encoded(r) for r in (records[0], broken, records[2])])

        def batch_decode(jpegs: List[Any]) -> List[Any]:
            return [decode_image(data, mode=ImageReadMode.RGB) for data in jpegs]

        # WHEN / THEN on the batched path and on the CPU's
        for decode in (batch_decode, None):
            with self.subTest(batched=decode is not None):
                with self.assertRaisesRegex(BadRecordError, r"record 17 of part-00003.tfrecord \(input green-48x48\.jpg\) cannot be decoded"):
                    decode_jpegs(batch, torch.device("cpu"), decode_batch=decode)

    def test_an_encoded_batch_refuses_offsets_that_do_not_cover_its_bytes(self) -> None:
        with self.assertRaisesRegex(ValueError, r"offsets must run from 0 to the data's 4 bytes"):
            EncodedBatch(torch.zeros(4, dtype=torch.uint8), torch.tensor([0, 3]))
        with self.assertRaisesRegex(ValueError, r"2 names for 1 images"):
            EncodedBatch(torch.zeros(4, dtype=torch.uint8), torch.tensor([0, 4]), ["a", "b"])

    def test_the_cpu_workers_crop_decodes_no_more_pixels_than_needed_and_matches_torchvisions_full_size_crop(self) -> None:
        # GIVEN a smooth 640x480 JPEG (big enough that most crops decode at 1/2, 1/4 or 1/8)
        from torchvision.io import ImageReadMode, decode_image, encode_jpeg
        from torchvision.transforms import RandomResizedCrop

        smooth = torch.nn.functional.interpolate(torch.rand(1, 3, 6, 8, generator=torch.Generator().manual_seed(2)) * 255,
                                                 size=(480, 640), mode="bicubic", align_corners=False)[0]
        data = bytes(encode_jpeg(smooth.clamp(0, 255).to(torch.uint8), quality=95).numpy())
        record = ImageRecord(image=data, label=4)
        full = decode_image(torch.frombuffer(bytearray(data), dtype=torch.uint8), mode=ImageReadMode.RGB).float()
        errors = []
        for seed in range(20):
            # WHEN
            torch.manual_seed(seed)
            image, label = CpuTrainTransform(64)(record)
            # THEN the crop torchvision's RandomResizedCrop draws with the same seed, resized from the full image
            torch.manual_seed(seed)
            top, left, height, width = RandomResizedCrop.get_params(full, list(SCALE), list(RATIO))
            expected = TF.resized_crop(full, top, left, height, width, [64, 64], antialias=True)
            if torch.rand(()) < 0.5:
                expected = expected.flip(-1)
            self.assertEqual((tuple(image.shape), image.dtype, label), ((3, 64, 64), torch.uint8, 4))
            errors.append(float((image.float() - expected).abs().mean()))
        self.assertLess(max(errors), 3.0, errors)  # within 3 of 255 grey levels on average, at any scale

    def test_the_hybrid_workers_decode_at_reduced_scale_never_below_the_crop_and_pad_the_batch(self) -> None:
        record = fixture_records()[0]  # 64x36
        image, label = CpuDecodeOnly(16)(record)
        self.assertEqual((tuple(image.shape), image.dtype, label), ((3, 18, 32), torch.uint8, 0))  # 1/2 keeps >= 16
        full, _ = CpuDecodeOnly(224)(record)
        self.assertEqual(tuple(full.shape), (3, 36, 64))
        (batch, sizes), labels, names = collate_padded([(*CpuDecodeOnly(8)(r), r.filename) for r in fixture_records()])
        self.assertEqual(batch.dtype, torch.uint8)
        self.assertEqual(tuple(batch.shape[:2]), (3, 3))
        self.assertEqual(sizes[:, 0].max().item(), batch.shape[2])
        self.assertTrue(bool((sizes >= 8).all()))
        self.assertEqual(labels.tolist(), [0, 1, 2])
        self.assertEqual(len(names), 3)

    def test_pad_batch_refuses_an_empty_batch(self) -> None:
        with self.assertRaisesRegex(ValueError, "no images"):
            pad_batch([])
        with self.assertRaisesRegex(ValueError, "no images"):
            pad_batch([], gathered=True)

    def test_the_gathered_padding_the_gpu_uses_gives_the_batch_of_one_copy_per_image(self) -> None:
        generator = torch.Generator().manual_seed(4)
        shapes = [(1, 1), (47, 3), (5, 61), (30, 30), (61, 47)]
        images = [torch.randint(1, 256, (3, h, w), dtype=torch.uint8, generator=generator) for h, w in shapes]
        copied, copied_sizes = pad_batch(images, gathered=False)
        gathered, gathered_sizes = pad_batch(images, gathered=True)
        self.assertEqual((gathered.dtype, tuple(gathered.shape)), (torch.uint8, (5, 3, 61, 61)))
        self.assertTrue(torch.equal(gathered, copied))
        self.assertTrue(torch.equal(gathered_sizes, copied_sizes))
        for image, padded in zip(images, gathered):  # each image top-left, zeros elsewhere (its pixels are >= 1)
            height, width = image.shape[1:]
            self.assertTrue(torch.equal(padded[:, :height, :width], image))
            self.assertEqual(int(padded.count_nonzero()), image.numel())

    def test_pad_batch_gathers_on_a_gpu_and_copies_on_the_cpu_by_default(self) -> None:
        images = [torch.ones(3, 2, 4, dtype=torch.uint8), torch.ones(3, 4, 2, dtype=torch.uint8)]
        batch, _ = pad_batch(images)
        self.assertTrue(torch.equal(batch, pad_batch(images, gathered=True)[0]))
        self.assertEqual(int(batch.sum()), 2 * 3 * 8)


class _CountingLoader:
    """Batches i = 0..count-1 (images: i, labels: i, a name), its position counted as it hands them out."""

    def __init__(self, count: int) -> None:
        self.count, self.handed_out = count, 0
        self.pulled = [threading.Event() for _ in range(count)]

    def __iter__(self):
        for index in range(self.count):
            self.handed_out = index + 1
            self.pulled[index].set()
            yield torch.tensor([index]), torch.tensor([index]), f"batch-{index}"

    def state_dict(self) -> dict:
        return {"handed_out": self.handed_out}


@needs_torch
class PrefetcherTest(unittest.TestCase):
    def test_batch_n_plus_1_is_prepared_on_another_thread_while_n_is_consumed(self) -> None:
        loader = _CountingLoader(4)
        threads = []

        def prepare(images, labels):
            threads.append(threading.get_ident())
            return images * 10, labels

        prefetcher = Prefetcher(loader, prepare, torch.device("cpu"))
        batches = iter(prefetcher)
        first = next(batches)
        # The consumer holds batch 0 and asks for nothing more: batch 1 is pulled and prepared anyway.
        self.assertTrue(loader.pulled[1].wait(timeout=60))
        self.assertEqual(first[0].tolist(), [0])
        rest = list(batches)
        self.assertEqual([b[0].item() for b in rest], [10, 20, 30])
        self.assertEqual([b[2] for b in rest], ["batch-1", "batch-2", "batch-3"])
        self.assertNotIn(threading.get_ident(), threads)

    def test_the_prefetcher_has_a_ready_batch_after_the_first_step(self) -> None:
        prefetcher = Prefetcher(_CountingLoader(3), lambda i, l: (i, l), torch.device("cpu"), depth=1)
        batches = iter(prefetcher)
        next(batches)
        ready = threading.Event()
        while not ready.wait(timeout=0.01):  # until the thread has put batch 1 in the queue
            if prefetcher.ready >= 1:
                ready.set()
        self.assertEqual(prefetcher.ready, 1)
        batches.close()

    def test_its_position_is_the_last_batch_handed_out_not_the_one_pulled_ahead(self) -> None:
        loader = _CountingLoader(5)
        prefetcher = Prefetcher(loader, lambda i, l: (i, l), torch.device("cpu"))
        batches = iter(prefetcher)
        next(batches)
        next(batches)
        self.assertTrue(loader.pulled[3].wait(timeout=60))  # the loader itself is ahead
        self.assertEqual(prefetcher.state_dict(), {"handed_out": 2})
        self.assertTrue(prefetcher.resumable)
        batches.close()

    def test_an_error_of_the_loader_or_of_prepare_is_raised_in_the_consumer(self) -> None:
        def failing(images, labels):
            if images.item() == 1:
                raise RuntimeError("cannot decode batch 1")
            return images, labels

        with self.assertRaisesRegex(RuntimeError, "cannot decode batch 1"):
            list(Prefetcher(_CountingLoader(3), failing, torch.device("cpu")))

    def test_stopping_early_ends_the_thread_so_the_next_epoch_can_iterate_the_loader_again(self) -> None:
        prefetcher = Prefetcher(_CountingLoader(6), lambda i, l: (i, l), torch.device("cpu"), depth=1)
        batches = iter(prefetcher)
        next(batches)
        batches.close()
        self.assertFalse([t for t in threading.enumerate() if t.name == "shardio-prefetch"])
        self.assertEqual(len(list(prefetcher)), 6)


class LoaderChoiceTest(unittest.TestCase):
    def test_the_tables_guess_is_cpu_where_its_workers_keep_up_with_the_gpu_else_gpu_never_hybrid(self) -> None:
        h100 = gpu_demand("NVIDIA H100 80GB HBM3")
        cases = [
            (dict(has_gpu=False, workers=7, dali_usable=False, demand=h100), "cpu"),
            (dict(has_gpu=True, workers=7, dali_usable=True, demand=h100), "dali"),
            (dict(has_gpu=True, workers=15, dali_usable=False, demand=gpu_demand("Tesla V100-SXM2-16GB")), "cpu"),
            (dict(has_gpu=True, workers=7, dali_usable=False, demand=h100), "gpu"),  # 7 x 330 < 3,284: hybrid was picked here
            (dict(has_gpu=True, workers=2, dali_usable=False, demand=h100), "gpu"),
            (dict(has_gpu=True, workers=3, dali_usable=False, demand=gpu_demand("H100", given=900)), "cpu"),
        ]
        for arguments, kind in cases:
            with self.subTest(**arguments):
                choice = choose_loader(**arguments)
                self.assertEqual(choice.kind, kind)
                self.assertTrue(choice.reason)

    def test_the_trial_measures_the_tables_guess_first_and_never_hybrid(self) -> None:
        self.assertEqual(trial_order("gpu", ["cpu", "hybrid", "gpu"]), ["gpu", "cpu"])
        self.assertEqual(trial_order("cpu", ["gpu", "cpu", "dali"]), ["cpu", "gpu", "dali"])
        self.assertEqual(trial_order("dali", ["cpu", "gpu", "dali"]), ["dali", "cpu", "gpu"])

    def test_the_fastest_measured_path_wins_and_the_reason_compares_it_with_the_runner_up(self) -> None:
        trials = [Trial("cpu", 903.0, 0.61), Trial("gpu", 2537.0, 0.04), Trial("dali", error="RuntimeError: no index files")]
        choice = pick(trials)
        self.assertEqual(choice.kind, "gpu")
        self.assertEqual(choice.reason, "measured: gpu 2537 samples/s (data wait 0.040), 2.81x cpu's 903 samples/s "
                                        "(data wait 0.610); dali failed: RuntimeError: no index files")
        table = trial_table(trials, "gpu")
        self.assertEqual(table[0].split(), ["loader", "samples/s", "data", "wait"])
        self.assertEqual(table[1].split(), ["cpu", "903.0", "0.610"])
        self.assertEqual(table[2].split(), ["gpu", "2537.0", "0.040", "<-", "chosen"])
        self.assertIn("failed: RuntimeError: no index files", table[3])

    def test_cpu_keeping_up_alone_ends_the_trial_and_says_why(self) -> None:
        choice = pick([Trial("cpu", 2100.0, KEEPS_UP / 2)])
        self.assertEqual(choice.kind, "cpu")
        self.assertIn("no other path can be faster", choice.reason)

    def test_with_no_path_that_ran_the_trial_fails_naming_each_ones_error(self) -> None:
        with self.assertRaisesRegex(RuntimeError, r"no loader path could run: cpu: OSError: gone; gpu: no step measured"):
            pick([Trial("cpu", error="OSError: gone"), Trial("gpu", 0.0, 0.0)])

    def test_a_measured_choice_is_reused_from_a_checkpoint_of_the_same_machine_only(self) -> None:
        machine = {"instance_type": "ml.p5.48xlarge", "device": "NVIDIA H100 80GB HBM3", "workers": 7, "ranks": 8}
        measured = pick([Trial("cpu", 903.0, 0.61), Trial("gpu", 2537.0, 0.04)])
        record = choice_record(measured, machine)
        reused = saved_choice({"epoch": 0, "loader_choice": record}, machine)
        self.assertEqual((reused.kind, reused.trials), ("gpu", measured.trials))
        self.assertEqual(reused.reason, f"measured before on this machine, saved with the checkpoint: {measured.reason}")
        self.assertEqual(choice_record(reused, machine), record)  # kept as it was by the next checkpoints
        self.assertIsNone(saved_choice({"epoch": 0, "loader_choice": record}, dict(machine, workers=3)))
        self.assertIsNone(saved_choice({"epoch": 0}, machine))
        self.assertIsNone(saved_choice(None, machine))
        self.assertIsNone(choice_record(LoaderChoice("cpu", "as asked"), machine))

    def test_earlier_names_are_accepted_and_an_unknown_one_is_refused_with_the_choices(self) -> None:
        self.assertEqual([requested_kind(n) for n in ("pytorch", "pytorch-gpu-decode", "hybrid", "auto")],
                         ["cpu", "gpu", "hybrid", "auto"])
        with self.assertRaisesRegex(ValueError, r"--loader nvjpeg: not a loader; use auto, cpu, hybrid, gpu, dali"):
            requested_kind("nvjpeg")


@needs_torch
@needs_packed
class TrainPathsTest(unittest.TestCase):
    """train.py on the CPU through the hybrid and gpu paths (their batch step runs on the CPU)."""

    def test_each_path_trains_every_batch_of_two_epochs(self) -> None:
        steps = 2 * -(-packed()["files"] // 4)
        for loader in ("hybrid", "gpu"):
            with self.subTest(loader=loader), tempfile.TemporaryDirectory() as input_dir:
                test_torch.write_channels(input_dir, {"train": {"TrainingInputMode": "File"}}, {"num_workers": "2"})
                os.symlink(packed()["tfrecord"], os.path.join(input_dir, "data", "train"))
                output = test_torch.TrainScriptTest.run_train(self, input_dir, "--epochs", "2", "--loader", loader)  # type: ignore[arg-type]
                self.assertIn(f"loader={loader} workers=2 (as asked; no GPU: its batch step runs on the CPU", output)
                self.assertIn(f"done steps={steps}", output)


if __name__ == "__main__":
    unittest.main()
