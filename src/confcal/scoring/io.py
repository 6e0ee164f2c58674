"""Reading documents and writing entity tables, with errors that say where.

Documents come as JSONL files (one ``{"doc_id": ..., "document": {...}}`` per line, gzip
allowed) or folders of per-document JSON files; entity tables (the DataFrame of
:func:`confcal.scoring.score_documents`) go to and come from Parquet or CSV. Every error
names the file and the line (JSONL), file (folder) or row (entity table) where it was found.

Writing is atomic: a file is written under a temporary name in its destination folder and
renamed into place, so a failure never leaves a half-written table behind.
"""

from __future__ import annotations

from ._documents import iter_documents, read_documents
from ._tables import (
    ENTITY_FORMATS,
    REQUIRED_ENTITY_COLUMNS,
    check_entities,
    iter_entities,
    read_entities,
    write_entities,
)

__all__ = [
    "ENTITY_FORMATS",
    "REQUIRED_ENTITY_COLUMNS",
    "check_entities",
    "iter_documents",
    "iter_entities",
    "read_documents",
    "read_entities",
    "write_entities",
]

