"""The run engine: worker processes, the per-file cache, assembly of the dataset."""
