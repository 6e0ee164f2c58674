"""Optional integrations, imported only by the code that needs them.

Nothing in the confcal core imports this package (``import confcal`` stays free of HTTP
clients and heavy dependencies; ``tests/test_architecture.py`` keeps the core from importing
an extra even lazily). Each module names the extra that installs what it needs:

- :mod:`confcal.extras.clients` (extra ``models``; ``bedrock`` for Bedrock): the model
  clients on one HTTP transport, and :mod:`confcal.extras.extraction`, the ConfBench
  extraction runner (verbalized, log-probability and two-stage confidence);
  :mod:`confcal.extras.models` is the public face of both.
- :mod:`confcal.extras.augment` (extra ``augment``): the 20 OCR-safe Augraphy pipelines.
- :mod:`confcal.extras.ocr` (extra ``ocr``): words and confidences from Tesseract and
  Textract.
- :mod:`confcal.extras.pdf` and :mod:`confcal.extras.docbench` (extras ``pdf``, ``models``):
  a DocBench parse-then-read system over PDFs (``confcal qa run``).
"""

from __future__ import annotations

__all__: list[str] = []
