"""The shuffle's quality on a packed dataset, per record order, at batch 64: how many of epoch 0's
first 64 records open epoch 1 too, and how often pairs batched together in epoch 0 are batched
together again in epoch 1, ÷ the same rate under a uniform shuffle (seeded permutations of the same
records, averaged over 8 pairs), measured in the same run.

  canonical    shardio's order (order.py), read by data_loader from the folder
  contiguous   the order before #40 (contiguous_order.py), read the same way
  webdataset   WebDataset's documented pipeline replayed on the same shards' record ids:
               shards shuffled per epoch (`shardshuffle`), dealt round-robin to the workers
               (`split_by_worker`), records in file order, `.shuffle(1000)` (a buffer of 1,000 that
               starts handing out after 100)

    /usr/bin/python3 bench/loader-cpu/shuffle_quality.py <packed folder> [--workers 0,2] [--buffers 1024,64]
"""
from __future__ import annotations

import argparse
import itertools
import os
import random
import sys
from typing import Dict, List, Sequence, Set, Tuple

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "container"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from shardio import LoaderOptions, Placement  # noqa: E402
from shardio.source.directory import ShardDirectory
from shardio.torch.dataset import ShardDataset, make_data_loader  # noqa: E402
from contiguous_order import ContiguousOrder  # noqa: E402

BATCH = 64
Batches = List[List[str]]


def pairs(batches: Batches) -> Set[Tuple[str, str]]:
    return {pair for batch in batches for pair in itertools.combinations(sorted(batch), 2)}


def measures(first: Batches, second: Batches) -> Tuple[int, float]:
    """(records the first batches share, share of epoch 0's batch pairs batched together in epoch 1)."""
    together = pairs(first)
    return len(set(first[0]) & set(second[0])), len(together & pairs(second)) / len(together)


def uniform(names: Sequence[str], seeds: int = 8) -> Tuple[float, float]:
    results = []
    for seed in range(seeds):
        rng = random.Random(seed)
        epochs = []
        for _ in range(2):
            order = list(names)
            rng.shuffle(order)
            epochs.append([order[i:i + BATCH] for i in range(0, len(order), BATCH)])
        results.append(measures(*epochs))
    return sum(r[0] for r in results) / seeds, sum(r[1] for r in results) / seeds


def loader_epochs(directory: ShardDirectory, workers: int, buffer: int) -> List[Batches]:
    options = LoaderOptions(placement=Placement(), transform=lambda record: record.filename, shuffle_buffer=buffer, seed=0,
                            num_workers=workers, collate_fn=list, pin_memory=False)
    loader = make_data_loader(ShardDataset(directory, options), BATCH)
    epochs = []
    for epoch in range(2):
        loader.set_epoch(epoch)
        epochs.append([list(batch) for batch in loader])
    return epochs


def webdataset_epochs(directory: ShardDirectory, workers: int) -> List[Batches]:
    names = [[record.filename for record in map(lambda r, s=shard: directory.image(r, s), directory.read(shard))]
             for shard in range(len(directory.shards))]
    epochs = []
    for epoch in range(2):
        shards = list(range(len(names)))
        random.Random(f"shards/{epoch}").shuffle(shards)
        per_worker = []
        for worker in range(max(1, workers)):
            rng = random.Random(f"samples/{epoch}/{worker}")
            stream = (name for shard in shards[worker::max(1, workers)] for name in names[shard])
            out, buffer = [], []
            for name in stream:  # webdataset.filters._shuffle(bufsize=1000, initial=100)
                buffer.append(name)
                if len(buffer) < 1000:
                    try:
                        buffer.append(next(stream))
                    except StopIteration:
                        pass
                if len(buffer) >= 100:
                    out.append(buffer.pop(rng.randrange(len(buffer))))
            while buffer:
                out.append(buffer.pop(rng.randrange(len(buffer))))
            per_worker.append([out[i:i + BATCH] for i in range(0, len(out), BATCH)])
        epochs.append([batch for row in itertools.zip_longest(*per_worker) for batch in row if batch])
    return epochs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset")
    parser.add_argument("--workers", default="0,2")
    parser.add_argument("--buffers", default="1024,64")
    args = parser.parse_args()
    directory = ShardDirectory(args.dataset)
    names = [record.filename for shard in range(len(directory.shards))
             for record in (directory.image(r, shard) for r in directory.read(shard))]
    overlap, rate = uniform(names)
    print(f"{len(names)} records in {len(directory.shards)} shards, batch {BATCH}; uniform shuffle: first {BATCH} share "
          f"{overlap:.1f}, batch-mates repeat {rate:.4f}")
    print(f"{'order':<11} {'buffer':>6} {'workers':>7} {'first 64 shared':>15} {'repeat':>7} {'÷ uniform':>9}")
    rows: Dict[str, Tuple[int, float]] = {}
    for buffer in (int(b) for b in args.buffers.split(",")):
        for workers in (int(w) for w in args.workers.split(",")):
            for kind, directory_of in (("canonical", ShardDirectory), ("contiguous", ContiguousOrder)):
                rows[kind] = measures(*loader_epochs(directory_of(args.dataset), workers, buffer))
                print(f"{kind:<11} {buffer:>6} {workers:>7} {rows[kind][0]:>15} {rows[kind][1]:7.4f} {rows[kind][1] / rate:9.2f}")
    for workers in (int(w) for w in args.workers.split(",")):
        shared, repeat = measures(*webdataset_epochs(directory, workers))
        print(f"{'webdataset':<11} {1000:>6} {workers:>7} {shared:>15} {repeat:7.4f} {repeat / rate:9.2f}")


if __name__ == "__main__":
    main()
