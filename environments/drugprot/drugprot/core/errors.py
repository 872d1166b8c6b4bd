"""Exceptions a user can catch: bad data names the file, row (pmid) and field that is wrong.

Every class derives from ``DrugprotError`` and from the builtin a caller of an older version caught
(``ValueError`` for bad knobs, bad data and bad arguments, ``KeyError`` for unknown names), so
``except ValueError`` / ``except KeyError`` keep working.
"""

from __future__ import annotations


class DrugprotError(Exception):
    """Base class of every error this package raises on purpose."""


class DrugprotConfigError(DrugprotError, ValueError):
    """A knob (``split``, ``num_tasks``, ``negatives``, ...) has a value the environment cannot use.

    Attributes:
        knob: the knob's name, as in ``--env.taskset.<knob>`` and ``load_environment(<knob>=...)``.
    """

    def __init__(self, message: str, *, knob: str) -> None:
        self.knob = knob
        super().__init__(message)


class DrugprotDataError(DrugprotError, ValueError):
    """Input data that does not follow the DrugProt schema, or cannot be read.

    Attributes:
        source: the file (with ``:line`` or ``#row<i>``), directory or dataset the row came from.
        pmid: the abstract's PubMed id, when known.
        field: the offending field (e.g. ``relations[3].arg2``), when known.
    """

    def __init__(
        self, message: str, *, source: str | None = None, pmid: str | None = None, field: str | None = None
    ) -> None:
        self.source, self.pmid, self.field = source, pmid, field
        where = ", ".join(
            part
            for part in (
                f"source {source}" if source else "",
                f"pmid {pmid}" if pmid else "",
                f"field {field}" if field else "",
            )
            if part
        )
        super().__init__(f"{message} ({where})" if where else message)


class DrugprotLookupError(DrugprotError, KeyError):
    """A name that is not in one of the package's tables: a relation type, an option letter, a mention id of
    a document, a reward name. A ``KeyError``, as these lookups raised before."""


class DrugprotArgumentError(DrugprotError, ValueError):
    """A function was called with arguments it cannot use (sequences of unequal length, a malformed row, an
    option combination that needs another argument). A ``ValueError``, as these checks raised before."""


class DrugprotHubError(DrugprotError, RuntimeError):
    """The Hugging Face hub could not be reached (or, offline, has no cached copy) to load the dataset."""
