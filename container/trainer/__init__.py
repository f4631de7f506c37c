"""train.py's own policies, beside it and not in the readers' package: which loader path to run
(loader_choice), the step's precision and compilation (step_choice) and the batch prefetcher (prefetch)."""
