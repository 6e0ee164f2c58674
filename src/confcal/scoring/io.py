"""Reading documents and writing entity tables, with errors that say where.

Documents come as JSONL files (one ``{"doc_id": ..., "document": {...}}`` per line, gzip
allowed) or folders of per-document JSON files; entity tables (the DataFrame of
:func:`confcal.scoring.score_documents`) go to and come from Parquet or CSV. Every error
names the file and the line (JSONL), file (folder) or row (entity table) where it was found.

Writing is atomic: a file is written under a temporary name in its destination folder and
renamed into place, so a failure never leaves a half-written table behind.

Reading is bounded (:class:`InputLimits`): line length, decompressed size, JSON nesting
depth and the length of a compared value have limits with safe defaults, and input beyond
one is an error naming the file and line, so hostile input costs bounded memory and time.
A key repeated in one JSON object is an error too (JSON parsers differ on which one wins).

The entity table's ``truth`` and ``prediction`` columns hold the raw values in object
columns; :func:`write_entities` writes each value's JSON text and :func:`read_entities` and
:func:`iter_entities` restore it, so ``"100"``, ``100`` and ``100.0`` come back as they were.
"""

from __future__ import annotations

from .._validation import InputLimits
from ._documents import iter_documents, read_documents
from ._tables import (
    ENTITY_FORMATS,
    REQUIRED_ENTITY_COLUMNS,
    check_entities,
    iter_entities,
    read_entities,
    read_entity_tables,
    write_entities,
)

__all__ = [
    "ENTITY_FORMATS",
    "REQUIRED_ENTITY_COLUMNS",
    "InputLimits",
    "check_entities",
    "iter_documents",
    "iter_entities",
    "read_documents",
    "read_entities",
    "read_entity_tables",
    "write_entities",
]

