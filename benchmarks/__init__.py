"""Benchmark scripts (run each as `python benchmarks/<name>.py`); a package so they can share `_timing`."""
