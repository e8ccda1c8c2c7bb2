"""Human-facing renderings of results (tables, markdown, JSON)."""
