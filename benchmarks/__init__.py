"""The benchmark scripts: each runs as ``.venv/bin/python benchmarks/<name>.py`` and logs to benchmarks/results/."""
