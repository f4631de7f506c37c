"""PyTorch: the dataset and DataLoader over a source, image decoding (CPU or GPU) and checkpoints.
Import its modules explicitly: `import shardio` never imports PyTorch."""
