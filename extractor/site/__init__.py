"""The browsable error catalogue: a static site built from a dataset or a nightly folder.

``build_site`` (in :mod:`extractor.site.build`) is the entry point; it needs the ``site`` extra
(Jinja2 and Pygments). Pages: one per record, per flag, per environment variable, per subsystem,
per kept version, and an index with a search box that works from ``file://``.
"""
