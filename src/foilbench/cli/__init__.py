"""Command-line interface: thin wiring over the library."""
