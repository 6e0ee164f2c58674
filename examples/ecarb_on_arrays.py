"""ECARB on your own arrays: how much does reviewing the least confident predictions buy?

Run: ``python examples/ecarb_on_arrays.py``. Replace the two arrays with yours: one entry
per extracted value, ``correct`` 1 if it was right, ``confidence`` what the model said.
"""

import confcal

correct = [1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1]
confidence = [0.99, 0.97, 0.62, 0.95, 0.9, 0.55, 0.99, 0.93, 0.88, 0.91,
              0.97, 0.99, 0.85, 0.96, 0.7, 0.98, 0.99, 0.94, 0.92, 0.97]

for budget in (0.1, 0.2, 0.3):
    k = confcal.review_count(budget, len(correct))
    value = confcal.ecarb(correct, confidence, budget=budget)
    best = confcal.ecarb_ceiling(correct, budget=budget)
    print(f"review the {k} least confident ({budget:.0%}): {value:.2f}x the errors of a random "
          f"review (best possible {best:.2f}x)")
print(f"AUROC {confcal.auroc(correct, confidence):.3f}, ECE {confcal.ece(correct, confidence):.3f}")
