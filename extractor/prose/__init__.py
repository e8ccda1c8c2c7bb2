"""The user-facing prose: knowledge of the target's flags and env vars, and the record's words."""
