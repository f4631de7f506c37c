"""A model of your own on packed shards: a ViT-S/8 (torchvision's VisionTransformer, not a ResNet)
trained by this script with the readers that `TrainingCode.fromAsset(..., { includeReaders: true })`
ships beside it as shardio/ (stack.ts). What the library asks of a script, all from shardio:
the channel's records through `data_loader` (split over the loader workers the job sizes),
the loader's position in each checkpoint (a spot interruption resumes at the record it reached), and
`interval_line` every --log_interval steps: the samples/s, data_wait and loss the job's metric
definitions publish for the dashboard and the diagnosis. One GPU (or the CPU): see
container/train.py for several GPUs and hosts.

Outside a job, `--data` reads a packed dataset from a folder, a file:// URL or s3://bucket/prefix/
(the same `data_loader`) instead of the job's channel, with the same checkpoints and lines:
`python train.py --data ./packed --checkpoint_dir ./checkpoints --model_dir ./model`."""
import argparse
import os
import signal
import time

import torch
from torchvision.models import VisionTransformer

from shardio import LoaderOptions, Source, ThroughputMeter, data_loader, interval_line
from shardio.source.channels import channel_manifest
from shardio.source.environment import input_channels, placement_from_env
from shardio.torch.checkpoint import CHECKPOINT_DIR, load_checkpoint, newest_checkpoint, save_checkpoint
from shardio.torch.images import CpuTrainTransform, normalize

parser = argparse.ArgumentParser()
for name, kind, default in [("epochs", int, 10), ("max_steps", int, 0), ("batch_size", int, 128), ("image_size", int, 64),
                            ("depth", int, 12), ("lr", float, 1e-3), ("log_interval", int, 50), ("checkpoint_interval", int, 500)]:
    parser.add_argument(f"--{name}", type=kind, default=default)
parser.add_argument("--input_dir", default=os.environ.get("SM_INPUT_DIR", "/opt/ml/input"))
parser.add_argument("--model_dir", default=os.environ.get("SM_MODEL_DIR", "/opt/ml/model"))
parser.add_argument("--checkpoint_dir", default=CHECKPOINT_DIR)
parser.add_argument("--data", default=None, help="a packed dataset's folder, file:// URL or s3:// prefix instead of the train channel")
args, _ = parser.parse_known_args()  # the toolkit passes every hyperparameter; num_workers is shardio's

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
if args.data:
    source = Source(args.data, input_dir=args.input_dir)
    classes = source.open(placement_from_env(), 0).manifest.classes
else:
    index = "index" if "index" in input_channels(args.input_dir) else None
    source = Source("sagemaker://train", index_channel=index, input_dir=args.input_dir)
    classes = channel_manifest("train", index_channel=index, input_dir=args.input_dir).classes  # without opening a Pipe
loader = data_loader(source, args.batch_size, LoaderOptions(transform=CpuTrainTransform(args.image_size), resumable=True))
model = VisionTransformer(image_size=args.image_size, patch_size=8, num_layers=args.depth, num_heads=6, hidden_dim=384,
                          mlp_dim=1536, num_classes=classes).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
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


def checkpoint() -> None:
    save_checkpoint(args.checkpoint_dir, step, 0, {"model": model.state_dict(), "optimizer": optimizer.state_dict()},
                    loader.state_dict())


meter, criterion = ThroughputMeter(), torch.nn.CrossEntropyLoss(ignore_index=-1)  # -1: an unlabeled file
for epoch in range(first_epoch, args.epochs):
    loader.set_epoch(epoch)
    model.train()
    meter.take()
    waiting = time.perf_counter()
    for images, labels in loader:
        waited = time.perf_counter() - waiting  # blocked on the loader: the data_wait of the interval
        loss = criterion(model(normalize(images.to(device, non_blocking=True))), labels.to(device, non_blocking=True))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        step += 1
        meter.add(len(labels), waited)
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
