"""The reviewed rating table: publisher wordings that Label Studio annotators mapped to RW-Post labels.

``rwpost labels --unknown STORE`` lists the long tail of ratings no table maps; ``rwpost annotate
push-ratings`` puts each (site, language, rating) before two annotators and ``rwpost annotate
pull-ratings`` writes their agreed (or adjudicated) answers as a new version of this table: the packaged
``ratings-reviewed.yaml`` plus the new rows, never a file that exists. Adopting it is a reviewed data
change: copy the file over ``rwpost/sites/ratings-reviewed.yaml`` in a change whose diff is exactly the
new rows. The packaged registry reads it after ``sites.yaml``'s own ``ratings`` and before labels.py's
language tables (:meth:`rwpost.sites.registry.Registry.ratings_for`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rwpost.errors import ConfigError
from rwpost.labels import EXCLUDED_TARGET, Label, normalize_rating

REVIEWED_FILE = Path(__file__).with_name("ratings-reviewed.yaml")
"""The packaged reviewed rating table."""

TARGETS: tuple[str, ...] = (*(str(label) for label in Label), EXCLUDED_TARGET)
"""What a rating can be mapped to: an RW-Post label, or ``excluded`` (not a factual-accuracy rating)."""

_HEADER = """\
# Reviewed rating mappings: publisher wordings no other table maps, each answered by two annotators in
# Label Studio (or an adjudicator where they disagreed). Written by `rwpost annotate pull-ratings`; adopt
# a new version by copying it over rwpost/sites/ratings-reviewed.yaml (review the diff: new rows only).
# Read after sites.yaml's own ratings, before labels.py's language tables.
"""


class ReviewedRating(BaseModel):
    """One reviewed row: a site's rating in one language and the label its reviewers gave it."""

    model_config = ConfigDict(extra="forbid")

    site: str = Field(description="the page host without www. (a crawl record's site)")
    language: str = Field(description="the ISO 639 code of the pages (``und`` when unknown)")
    rating: str = Field(description="the publisher's wording, as published")
    label: Literal[TARGETS] = Field(description="an RW-Post label, or excluded")  # type: ignore[valid-type]
    status: Literal["agreed", "adjudicated"]
    annotators: list[str] = Field(default_factory=list)
    articles: int = Field(default=0, ge=0, description="pages with this rating when it was reviewed")

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.site, self.language, normalize_rating(self.rating))


class RatingTable(BaseModel):
    """A version of the reviewed rating table."""

    model_config = ConfigDict(extra="forbid")

    version: int = Field(ge=0)
    ratings: list[ReviewedRating] = Field(default_factory=list)

    def lookup(self) -> dict[tuple[str, str], dict[str, str]]:
        """``(site, language) -> {rating: label}``, the shape of a sites.yaml ``ratings`` table."""
        out: dict[tuple[str, str], dict[str, str]] = {}
        for row in self.ratings:
            out.setdefault((row.site, row.language), {})[row.rating] = row.label
        return out


M = TypeVar("M", bound=BaseModel)


def read_yaml_model(path: Path, model: type[M], what: str) -> M:
    """``path``'s YAML validated as ``model``; an unreadable file, bad YAML or an invalid field is one
    :class:`ConfigError` line naming the file (and the field), ``what`` naming the kind of file."""
    try:
        return model.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the {what} ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not YAML ({str(exc).splitlines()[0]})") from None
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise ConfigError(f"{path}: {where}: {error['msg']}") from None


def load_rating_table(path: Path = REVIEWED_FILE) -> RatingTable:
    """Read and validate a reviewed rating table; a bad one is one line naming the file and the row."""
    table = read_yaml_model(path, RatingTable, "rating table")
    keys = [row.key for row in table.ratings]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        site, language, rating = repeated[0]
        raise ConfigError(f"{path}: rating {rating!r} of {site} ({language}) given more than once")
    return table


def updated_table(base: RatingTable, rows: list[ReviewedRating]) -> tuple[RatingTable, list[ReviewedRating]]:
    """The next version of ``base`` with the reviewed ``rows`` it lacks, and those rows. A row that
    ``base`` already has (same site, language and wording) is kept as it is in ``base``: changing a
    reviewed mapping is a hand edit, never a side effect of a pull."""
    known = {row.key for row in base.ratings}
    new: list[ReviewedRating] = []
    for row in rows:
        if row.key not in known:
            known.add(row.key)
            new.append(row)
    if not new:
        return base, []
    ordered = sorted([*base.ratings, *new], key=lambda r: (r.site, r.language, normalize_rating(r.rating)))
    return RatingTable(version=base.version + 1, ratings=ordered), new


def dump_rating_table(table: RatingTable) -> str:
    """The YAML text of a table (its header comment, rows sorted, Unicode kept)."""
    body = yaml.safe_dump(
        table.model_dump(mode="json"),
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=False,
        width=110,
    )
    return _HEADER + body
