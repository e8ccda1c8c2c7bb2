"""The record: the pydantic model (schema v2) and its JSONL form."""
