"""Performance measurements (not tests): each module has main() and writes benchmarks/results/NAME.json."""
