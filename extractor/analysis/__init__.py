"""Per-file analysis: parse, sites, guards, messages, error classes, the source window."""
