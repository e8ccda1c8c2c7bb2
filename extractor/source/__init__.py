"""The target: URL safety, clones and fetches, reading blobs, the scope."""
