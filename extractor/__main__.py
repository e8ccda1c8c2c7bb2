"""``python -m extractor`` runs the CLI."""

from extractor.cli import main

main()
