"""Pedestrian boxes and masks on multi-part samples: each sample of the packed Penn-Fudan dataset is
an image (`png`), its instance mask (`mask.png`) and its boxes (`json`), as prepare.py wrote them and
`training-io pack --parts png,mask.png,json` packed them into one record. The readers that
`TrainingCode.fromAsset(..., { includeReaders: true })` ships beside this script as shardio/ hand
each sample out whole (`LoaderOptions(samples=True)`), in a loader worker; `Resized` decodes its parts with the
readers' SampleDecoder, resizes its image and mask to one size and scales its boxes, and `collate`
batches them: the images and masks stacked, the boxes a list, since each image has its own number
of pedestrians. The model is model.py's (a small CenterNet-style box and mask net); the loader's
position in each checkpoint, and `interval_line` every --log_interval steps, are the readers', as
in examples/custom-model/train.py.

Outside a job, `--data` reads a packed dataset from a folder, a file:// URL or s3://bucket/prefix/
instead of the job's channel: `python train.py --data ./packed --checkpoint_dir ./checkpoints --model_dir ./model`.
`--keys_log FILE` appends `<epoch> <key>` for every sample trained on: what each epoch read."""
import argparse
import os
import signal
import time
from typing import Any, Dict, List

import torch
from torch.nn import functional

from model import BoxMaskNet, box_mask_loss
from shardio import LoaderOptions, Source, ThroughputMeter, data_loader, interval_line
from shardio.format.samples import Sample
from shardio.source.environment import input_channels
from shardio.torch.checkpoint import CHECKPOINT_DIR, load_checkpoint, newest_checkpoint, save_checkpoint
from shardio.torch.collate import collate_part
from shardio.torch.images import normalize
from shardio.torch.sample_decode import SampleDecoder

parser = argparse.ArgumentParser()
for name, kind, default in [("epochs", int, 10), ("max_steps", int, 0), ("batch_size", int, 8), ("image_size", int, 256),
                            ("width", int, 32), ("lr", float, 1e-3), ("log_interval", int, 10), ("checkpoint_interval", int, 100)]:
    parser.add_argument(f"--{name}", type=kind, default=default)
parser.add_argument("--input_dir", default=os.environ.get("SM_INPUT_DIR", "/opt/ml/input"))
parser.add_argument("--model_dir", default=os.environ.get("SM_MODEL_DIR", "/opt/ml/model"))
parser.add_argument("--checkpoint_dir", default=CHECKPOINT_DIR)
parser.add_argument("--data", default=None, help="a packed dataset's folder, file:// URL or s3:// prefix instead of the train channel")
parser.add_argument("--keys_log", default=None, help="append '<epoch> <key>' for each sample trained on to this file")
args, _ = parser.parse_known_args()  # the toolkit passes every hyperparameter; num_workers is shardio's


class Resized:
    """A sample, decoded by the readers' SampleDecoder (the image a uint8 RGB CHW tensor, the mask a uint8
    (1, H, W) tensor of its instance values, the JSON parsed), resized to S × S: the image bilinear, the mask
    by nearest neighbour (its values are instance ids) and made 1 on a pedestrian, the boxes scaled to it."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.decode = SampleDecoder()

    def __call__(self, sample: Sample) -> Dict[str, Any]:
        sample = self.decode(sample)
        annotation, side = sample["json"], (self.size, self.size)
        scale = torch.tensor([self.size / annotation["width"], self.size / annotation["height"]] * 2)
        image = functional.interpolate(sample["png"][None].float(), size=side, mode="bilinear", align_corners=False, antialias=True)
        instances = functional.interpolate(sample["mask.png"][None].float(), size=side, mode="nearest")
        return {"png": image[0], "mask.png": (instances[0, 0] > 0).float(), "__key__": sample["__key__"],
                "boxes": torch.tensor(annotation["boxes"], dtype=torch.float32).reshape(-1, 4) * scale}


def collate(samples: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The readers' rule (`collate_part`: the images and masks stacked, the keys a list) for every entry but
    the boxes: those stay a list of (n, 4) tensors, each image with its own number of pedestrians, even
    where a batch's counts happen to agree."""
    batch = {name: collate_part([sample[name] for sample in samples]) for name in ("png", "mask.png", "__key__")}
    batch["boxes"] = [sample["boxes"] for sample in samples]
    return batch


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
if args.data:
    source = Source(args.data, input_dir=args.input_dir)
else:
    source = Source("sagemaker://train", index_channel="index" if "index" in input_channels(args.input_dir) else None,
                    input_dir=args.input_dir)
loader = data_loader(source, args.batch_size, LoaderOptions(samples=True, transform=Resized(args.image_size), collate_fn=collate,
                                                            resumable=True))
model = BoxMaskNet(args.width).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
first_epoch, step = 0, newest_checkpoint(args.checkpoint_dir, 1) or 0
if step:
    restored = load_checkpoint(args.checkpoint_dir, step, 0, device)
    model.load_state_dict(restored["training"]["model"])
    optimizer.load_state_dict(restored["training"]["optimizer"])
    loader.load_state_dict(restored["loader"])  # before the first batch: the workers skip what was trained on
    first_epoch = restored["loader"]["epoch"]
    print(f"resumed step={step} at record {restored['loader']['sample_in_epoch']} of epoch {first_epoch}", flush=True)
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append("SIGTERM"))  # a spot interruption: checkpoint, then end
keys_log = open(args.keys_log, "a") if args.keys_log else None


def checkpoint() -> None:
    save_checkpoint(args.checkpoint_dir, step, 0, {"model": model.state_dict(), "optimizer": optimizer.state_dict()},
                    loader.state_dict())


meter = ThroughputMeter()
for epoch in range(first_epoch, args.epochs):
    loader.set_epoch(epoch)
    model.train()
    meter.take()
    waiting = time.perf_counter()
    for batch in loader:
        waited = time.perf_counter() - waiting  # blocked on the loader: the data_wait of the interval
        images, masks = normalize(batch["png"].to(device, non_blocking=True)), batch["mask.png"].to(device, non_blocking=True)
        keys = batch["__key__"]
        loss = box_mask_loss(model(images), [boxes.to(device) for boxes in batch["boxes"]], masks)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        step += 1
        meter.add(len(keys), waited)
        if keys_log:
            keys_log.writelines(f"{epoch} {key}\n" for key in keys)
            keys_log.flush()
        if step % args.log_interval == 0:
            interval = meter.take()
            print(interval_line(epoch, step, interval.samples_per_second, interval.data_wait_fraction, loss.item()), flush=True)
        if stop or step == args.max_steps or step % args.checkpoint_interval == 0:
            checkpoint()
        if stop or step == args.max_steps:
            break
        waiting = time.perf_counter()
    if stop or step == args.max_steps:
        break
    checkpoint()  # at the epoch's end: a resume goes on with the next epoch
print(f"{'stopped by ' + stop[0] if stop else 'done'} at step={step}", flush=True)
os.makedirs(args.model_dir, exist_ok=True)
torch.save(model.state_dict(), os.path.join(args.model_dir, "model.pt"))
