"""DVC entries, one per stage of dvc.yaml: ``python -m pipelines.<stage>`` -> ``rwpost.stages.<stage>``."""
