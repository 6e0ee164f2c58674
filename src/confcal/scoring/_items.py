"""Line items: the Items fields of many documents read, checked and compared in blocks.

Line items are scored in blocks of consecutive documents of at most a budget of units (the
scorer's ``_BLOCK_BUDGET``): a document costs its item pairs plus :data:`ITEM_COST` per
item, so a block holds about 45 invoices of 20 items. A block's leaves and its (k
sub-fields x pairs) similarities stay in the processor's cache and in memory the allocator
already holds: one block of all 1,000 invoices of the scoring benchmark made arrays of
16 MB, each a fresh mapping whose pages faulted in one by one, and its passes over 100,000
leaves ran from main memory (0.40-0.49 s a call against 0.26-0.29 s in blocks). A document
larger than the budget is a block of its own.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .._validation import InputLimits, is_missing
from ..exceptions import ValidationError
from ._columns import (
    Chunks,
    Columns,
    Pool,
    check_truth_column,
    missing_by_lengths,
    pred_column,
)
from ._inputs import NameCheck, doc_label
from ._kernels import block_pairs, fix_missing, kernel
from ._text import check_block_work
from .matching import assign_pairs, item_similarity
from .schema import Items

ITEM_COST = 8
"""Units of the block budget per line item (truth or predicted), beside one per item pair."""

_DICT = frozenset({dict})


class ItemsField:
    """One Items field. The items of all documents are collected first, then scored in
    blocks of consecutive documents: a block's leaves are taken out item by item and
    checked, and each sub-field's values are parsed and compared with one kernel call; only
    the assignment runs document by document."""

    def __init__(self, name: str, spec: Items, order: int, first_code: int) -> None:
        self.name, self.spec, self.order = name, spec, order
        self.subs = list(spec.fields)
        self.sub_keys = frozenset(self.subs)
        self.specs = list(spec.fields.values())
        # chosen by capability: built-in kernels, a BatchedComparator's batches, or pair by pair
        self.kernels = [kernel(f.comparator, (f"{name}.{sub}",))
                        for sub, f in zip(self.subs, self.specs, strict=True)]
        self.codes = np.arange(first_code, first_code + len(self.subs), dtype=np.int64)
        self.weights = np.array([f.weight for f in self.specs], dtype=np.float64)
        # Item i of the b-th collected document is truth_items[t_start[b] + i].
        self.truth_items: list[Any] = []
        self.pred_items: list[Any] = []
        self.docs: list[int] = []
        self.doc_ids: list[Any] = []
        self.m: list[int] = []
        self.n: list[int] = []

    def _list(self, value: Any, doc_id: Any, side: str) -> Sequence[Any]:
        if is_missing(value):
            return ()
        if not isinstance(value, (list, tuple)):
            raise ValidationError(
                f"{doc_label(doc_id)}, field {self.name}: {side} must be a list of items "
                f"(mappings); found {type(value).__name__} {value!r:.80}",
                doc_id=doc_id, field=self.name,
            )
        return value

    def collect(
        self, doc_pos: int, doc_id: Any, truth_doc: Mapping[str, Any], pred_doc: Mapping[str, Any]
    ) -> None:
        truth_items = self._list(truth_doc.get(self.name), doc_id, "the truth value")
        pred_items = self._list(pred_doc.get(self.name), doc_id, "the prediction")
        if truth_items or pred_items:
            self.truth_items.extend(truth_items)
            self.pred_items.extend(pred_items)
            self.docs.append(doc_pos)
            self.doc_ids.append(doc_id)
            self.m.append(len(truth_items))
            self.n.append(len(pred_items))

    @staticmethod
    def _locator(starts: np.ndarray, doc_ids: list[Any]) -> Callable[[int], tuple[Any, int]]:
        """Item index in a block -> (doc id, index of the item in that document's list),
        ``starts`` and ``doc_ids`` of the block's documents."""
        def locate(k: int) -> tuple[Any, int]:
            # the last document starting at or before k (empty lists share a start)
            b = int(np.searchsorted(starts, k, side="right")) - 1
            return doc_ids[b], k - int(starts[b])
        return locate

    def _cells(
        self, items: list[Any], side: str, locate: Callable[[int], tuple[Any, int]],
        tally: dict[str, int], names: NameCheck,
    ) -> list[Any]:
        """The sub-field leaves of every item, item after item (``cells[i * k + s]`` is
        sub-field ``s`` of item ``i``), once items are mappings; keys outside the schema are
        counted (or refused).

        Item after item is the order in which a document's leaves lie in memory, so every
        later pass over the leaves reads memory forwards; a pass over one sub-field of all
        items jumps across the whole corpus, several times slower on 100,000 leaves.
        """
        all_dicts = _DICT.issuperset(map(type, items))
        if not all_dicts:
            for k, item in enumerate(items):
                if not isinstance(item, Mapping):
                    doc_id, i = locate(k)
                    raise ValidationError(
                        f"{doc_label(doc_id)}, field {self.name}[{i}]: {side} item must be a "
                        f"mapping of sub-fields; found {type(item).__name__} {item!r:.80}",
                        doc_id=doc_id, field=f"{self.name}[{i}]",
                    )
        subs = self.subs
        if all_dicts and frozenset({len(subs)}).issuperset(map(len, items)):
            # k keys of which k are sub-fields: exactly the sub-fields, nothing to count
            try:
                if len(subs) == 1:
                    return list(map(operator.itemgetter(subs[0]), items))
                return list(itertools.chain.from_iterable(
                    map(operator.itemgetter(*subs), items)))
            except KeyError:
                pass
        sub_keys = self.sub_keys
        for k, item in enumerate(items):
            if item.keys() <= sub_keys:
                continue
            if side == "truth":
                tally["unscored_truth_fields"] += len(item.keys() - sub_keys)
                continue
            doc_id, i = locate(k)
            tally["unknown_fields"] += names.unknown(item.keys(), sub_keys, doc_id, self.name,
                                                     f"[{i}]")
        return [item.get(sub) for item in items for sub in subs]

    def _columns(self, truth_cells: list[Any], pred_cells: list[Any],
                 locate_truth: Callable[[int], tuple[Any, int]],
                 locate_pred: Callable[[int], tuple[Any, int]], max_chars: int) -> Columns:
        """The checked columns of every sub-field: all leaves checked at once in item order
        when they take the common shapes, else column by column, which names the first
        bad leaf (sub-field by sub-field, truth before prediction)."""
        fast = Columns.common(truth_cells, pred_cells, len(self.subs), max_chars)
        if fast is not None:
            return fast

        def where(locate: Callable[[int], tuple[Any, int]], sub: str
                  ) -> Callable[[int], tuple[Any, str]]:
            def describe(j: int) -> tuple[Any, str]:
                doc_id, i = locate(j)
                return doc_id, f"{self.name}[{i}].{sub}"
            return describe

        k = len(self.subs)
        cols = Columns()
        for s, sub in enumerate(self.subs):
            column = truth_cells[s::k]
            t_chars = check_truth_column(column, where(locate_truth, sub), max_chars)
            leaves = pred_cells[s::k]
            values, confidences, p_chars = pred_column(leaves, where(locate_pred, sub),
                                                        max_chars)
            cols.truth.append(column)
            cols.pred.append(values)
            cols.confidence.append(confidences)
            cols.leaves.append(leaves)
            cols.chars.append((t_chars, p_chars))
            cols.truth_missing.append(missing_by_lengths(column, t_chars))
            cols.pred_missing.append(missing_by_lengths(values, p_chars))
        return cols

    def flush(self, pool: Pool, out: Chunks, tally: dict[str, int], names: NameCheck,
              budget: int, limits: InputLimits) -> None:
        """Score the collected documents in blocks of consecutive documents of at most
        ``budget`` units each (item pairs plus :data:`ITEM_COST` per item). Blocks go in
        document order; within a block the items are checked to be mappings first (truth,
        then prediction), then the leaves sub-field by sub-field, then the work bound."""
        if not self.docs:
            return
        m = np.array(self.m, dtype=np.int64)
        n = np.array(self.n, dtype=np.int64)
        sizes = m * n + ITEM_COST * (m + n)
        t_first, p_first = (np.cumsum(m) - m).tolist(), (np.cumsum(n) - n).tolist()
        for lo, hi in chunks(sizes.tolist(), budget):
            items = (slice(t_first[lo], t_first[lo] + int(m[lo:hi].sum())),
                     slice(p_first[lo], p_first[lo] + int(n[lo:hi].sum())))
            self._flush_block(lo, hi, m[lo:hi], n[lo:hi], items, pool, out, tally, names,
                              limits)

    def _flush_block(self, lo: int, hi: int, m: np.ndarray, n: np.ndarray,
                     items: tuple[slice, slice], pool: Pool, out: Chunks,
                     tally: dict[str, int], names: NameCheck, limits: InputLimits) -> None:
        """Documents ``lo`` to ``hi`` of the collected ones, with ``m`` truth and ``n``
        predicted items each, ``items`` their places in the collected truth and predicted
        items."""
        k = len(self.subs)
        t_start, p_start = np.cumsum(m) - m, np.cumsum(n) - n
        truth_items, pred_items = self.truth_items[items[0]], self.pred_items[items[1]]
        doc_ids = self.doc_ids[lo:hi]
        locate_truth = self._locator(t_start, doc_ids)
        locate_pred = self._locator(p_start, doc_ids)
        truth_cells = self._cells(truth_items, "truth", locate_truth, tally, names)
        pred_cells = self._cells(pred_items, "predicted", locate_pred, tally, names)
        cols = self._columns(truth_cells, pred_cells, locate_truth, locate_pred,
                             limits.max_value_chars)
        # before any comparison: a document whose items would cost too much is refused
        check_block_work(doc_ids, self.name, k, m, n, cols.compared, limits)

        tm, pm = cols.truth_missing, cols.pred_missing
        prepared_t = [kern._prepare(col, mask)
                      for kern, col, mask in zip(self.kernels, cols.truth, tm, strict=True)]
        prepared_p = [kern._prepare(col, mask)
                      for kern, col, mask in zip(self.kernels, cols.pred, pm, strict=True)]
        truth_base = np.empty(k, dtype=np.int64)
        pred_base = np.empty(k, dtype=np.int64)
        for s in range(k):
            truth_base[s], pred_base[s] = len(pool.truth), len(pool.prediction)
            pool.truth.extend(cols.truth[s])
            pool.truth_missing.append(tm[s])
            pool.prediction.extend(cols.pred[s])
            pool.pred_missing.append(pm[s])
            pool.confidence.extend(cols.confidence[s])

        ti, pj = block_pairs(t_start, m, p_start, n)
        sims = np.empty((k, len(ti)))
        for s, kern in enumerate(self.kernels):
            raw = kern._blocks(prepared_t[s], prepared_p[s], t_start, m, p_start, n, ti, pj)
            sims[s] = fix_missing(raw, tm[s][ti], pm[s][pj])
        evidence = np.stack([~(tm[s][ti] & pm[s][pj]) for s in range(k)])
        item_sim = item_similarity(sims, evidence, self.weights)
        docs = np.array(self.docs[lo:hi], dtype=np.int64)
        self._emit(docs, t_start, m, p_start, n, sims, item_sim, self.spec.match_threshold,
                   truth_base, pred_base, out)

    def _emit(
        self, docs: np.ndarray, t_start: np.ndarray, m: np.ndarray, p_start: np.ndarray,
        n: np.ndarray, sims: np.ndarray, item_sim: np.ndarray, threshold: float,
        truth_base: np.ndarray, pred_base: np.ndarray, out: Chunks,
    ) -> None:
        """Assign items document by document, then build the rows of all of them at once."""
        block_start = np.cumsum(m * n) - m * n
        rows, cols, lone_truth, lone_pred = [], [], [], []
        for start, mb, nb in zip(block_start.tolist(), m.tolist(), n.tolist(), strict=True):
            r, c, lt, lp = assign_pairs(item_sim[start:start + mb * nb].reshape(mb, nb), threshold)
            rows.append(r)
            cols.append(c)
            lone_truth.append(lt)
            lone_pred.append(lp)
        n_pairs = np.array([len(r) for r in rows], dtype=np.int64)
        n_lt = np.array([len(x) for x in lone_truth], dtype=np.int64)
        n_lp = np.array([len(x) for x in lone_pred], dtype=np.int64)
        block = np.arange(len(docs))

        def within(counts: np.ndarray) -> np.ndarray:
            return np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)

        pair_block = np.repeat(block, n_pairs)
        lt_block = np.repeat(block, n_lt)
        lp_block = np.repeat(block, n_lp)
        r, c = np.concatenate(rows), np.concatenate(cols)
        lt, lp = np.concatenate(lone_truth), np.concatenate(lone_pred)
        # Entries of a document: pairs (by truth index), unpaired truth, unpaired predicted;
        # -1 marks the side without an item, whose references point at the pool sentinel.
        entry_block = np.concatenate([pair_block, lt_block, lp_block])
        entry_rank = np.concatenate([
            within(n_pairs), n_pairs[lt_block] + within(n_lt),
            n_pairs[lp_block] + n_lt[lp_block] + within(n_lp),
        ])
        ti = np.concatenate([r, lt, np.full(len(lp), -1, dtype=np.int64)])
        pj = np.concatenate([c, np.full(len(lt), -1, dtype=np.int64), lp])
        e, k = len(ti), len(self.subs)
        raw = np.zeros((e, k))
        raw[: len(r)] = sims[:, block_start[pair_block] + r * n[pair_block] + c].T
        truth_ref = np.where(
            ti[:, None] >= 0, truth_base[None, :] + (t_start[entry_block] + ti)[:, None], 0
        )
        pred_ref = np.where(
            pj[:, None] >= 0, pred_base[None, :] + (p_start[entry_block] + pj)[:, None], 0
        )
        out.doc.append(np.repeat(docs[entry_block], k))
        out.order.append(np.full(e * k, self.order, dtype=np.int64))
        out.rank.append((entry_rank[:, None] * k + np.arange(k)).ravel())
        out.field.append(np.tile(self.codes, e))
        out.truth_index.append(np.repeat(ti, k))
        out.pred_index.append(np.repeat(pj, k))
        out.truth_ref.append(truth_ref.ravel())
        out.pred_ref.append(pred_ref.ravel())
        out.raw.append(raw.ravel())


def chunks(sizes: list[int], budget: int) -> list[tuple[int, int]]:
    """Consecutive [lo, hi) ranges of documents of at most ``budget`` total size each (a
    single document larger than that gets a range of its own)."""
    ranges, lo, held = [], 0, 0
    for i, size in enumerate(sizes):
        if held + size > budget and i > lo:
            ranges.append((lo, i))
            lo, held = i, 0
        held += size
    ranges.append((lo, len(sizes)))
    return ranges
