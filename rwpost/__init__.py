"""rwpost: build, validate, version and benchmark the RW-Post multimodal fact-checking dataset."""

from rwpost.errors import RecordError, RwpostError
from rwpost.records import SCHEMA_VERSION

__version__ = "0.1.0"
__all__ = ["SCHEMA_VERSION", "RecordError", "RwpostError", "load", "__version__"]


def load(path_or_version: str, subset: str = "main", split: str = "test", **kwargs):  # noqa: ANN201
    """Load one RW-Post split as a Hugging Face ``datasets.Dataset`` (see :func:`rwpost.dataset.load`)."""
    from rwpost.dataset import load as _load

    return _load(path_or_version, subset=subset, split=split, **kwargs)
