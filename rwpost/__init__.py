"""rwpost: build, validate, version and benchmark the RW-Post multimodal fact-checking dataset."""

from typing import Any

from rwpost.errors import RecordError, RwpostError

__version__ = "0.1.0"
__all__ = ["SCHEMA_VERSION", "RecordError", "RwpostError", "load", "__version__"]


def load(path_or_version: str, subset: str = "main", split: str = "test", **kwargs):  # noqa: ANN201
    """Load one RW-Post split as a Hugging Face ``datasets.Dataset`` (see :func:`rwpost.dataset.load`)."""
    from rwpost.dataset import load as _load

    return _load(path_or_version, subset=subset, split=split, **kwargs)


def __getattr__(name: str) -> Any:
    """``SCHEMA_VERSION`` on first use: importing the record models is most of a command's start-up."""
    if name == "SCHEMA_VERSION":
        from rwpost.records import SCHEMA_VERSION

        return SCHEMA_VERSION
    raise AttributeError(f"module 'rwpost' has no attribute {name!r}")
