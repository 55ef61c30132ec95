"""Build checks that are not part of the library: the import-linter contract for package APIs."""
