"""Performance benchmarks of the drugprot environment; see bench/README.md."""
