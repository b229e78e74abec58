"""Benchmarks other than RW-Post, read from folders the user has (never downloaded), as runner samples.

- :mod:`.mmfakebench`: MMFakeBench (Liu et al., ICLR 2025), the benchmark T2Agent reports on.
"""
