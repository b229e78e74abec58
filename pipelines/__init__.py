"""Thin DVC stages: each reads params.yaml and its inputs, calls rwpost, writes its outputs."""
