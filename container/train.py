"""Reference training entry point: reads every channel the way the job delivers it and reports
the input throughput, so a deployed stack can be checked end to end before a real model is
plugged in. Runs under the SageMaker training toolkit (sagemaker_program=train.py).

Modes (from /opt/ml/input/config/inputdataconfig.json):
  File / FastFile: files under /opt/ml/input/data/<channel>/
  Pipe:            one FIFO per epoch, /opt/ml/input/data/<channel>_<epoch>
"""
import argparse
import json
import os
import time

INPUT_DIR = "/opt/ml/input"
CHUNK = 8 * 1024 * 1024


def read_file_channel(directory):
    total = 0
    for root, _dirs, files in os.walk(directory):
        for name in sorted(files):
            with open(os.path.join(root, name), "rb") as handle:
                while True:
                    chunk = handle.read(CHUNK)
                    if not chunk:
                        break
                    total += len(chunk)
    return total


def read_pipe_channel(channel, epoch):
    fifo = os.path.join(INPUT_DIR, "data", f"{channel}_{epoch}")
    # SageMaker creates the next epoch's FIFO when the previous one is drained: wait for it.
    deadline = time.time() + 300
    while not os.path.exists(fifo):
        if time.time() > deadline:
            raise FileNotFoundError(f"Pipe-mode FIFO {fifo} did not appear within 300 s")
        time.sleep(0.1)
    total = 0
    with open(fifo, "rb") as handle:
        while True:
            chunk = handle.read(CHUNK)
            if not chunk:
                break
            total += len(chunk)
    return total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--num_workers", type=int, default=1)
    args, _unknown = parser.parse_known_args()

    with open(os.path.join(INPUT_DIR, "config", "inputdataconfig.json")) as handle:
        channels = json.load(handle)
    for epoch in range(args.epochs):
        for channel, config in sorted(channels.items()):
            started = time.time()
            if config.get("TrainingInputMode") == "Pipe":
                total = read_pipe_channel(channel, epoch)
            else:
                total = read_file_channel(os.path.join(INPUT_DIR, "data", channel))
            seconds = max(time.time() - started, 1e-9)
            print(f"epoch={epoch} channel={channel} bytes={total} seconds={seconds:.3f} "
                  f"input_mb_per_s={total / seconds / 1e6:.1f}", flush=True)


if __name__ == "__main__":
    main()
