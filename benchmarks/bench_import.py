"""What ``import confcal`` and a first metric call cost, side by side with numpy, in one run.

Each command runs in a fresh interpreter (``python -c ...``), the same way a user's script
starts. Machines here are noisy: read the ratios, not the milliseconds.

    python benchmarks/bench_import.py              # 7 timed runs per command
    python benchmarks/bench_import.py --runs 21    # steadier medians

Each command is run once to warm the file-system cache, then the commands are timed in
turn, round by round (numpy, confcal, auroc, ..., numpy, confcal, ...), so that a burst of
load on a shared machine falls on every command alike; the figure is the median wall time
of the ``--runs`` rounds. The module count is ``len(sys.modules)`` at the end of the
command, from one more untimed run.

Target (docs/architecture.md): ``import confcal; confcal.auroc(...)`` within
2x ``import numpy``; pandas, scipy and the rest load only when a function needs them
(``calibration_report`` returns its bins as a DataFrame, so it loads pandas).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = [
    ("python startup", "pass"),
    ("numpy", "import numpy"),
    ("confcal", "import confcal"),
    ("confcal + auroc", "import confcal; confcal.auroc([0, 1], [0.2, 0.8])"),
    ("confcal + calibration_report",
     "import confcal; confcal.calibration_report([0, 1], [0.2, 0.8])"),
    ("pandas", "import pandas"),
]
HEAVY = ("pandas", "scipy", "sklearn", "rapidfuzz", "dateutil", "matplotlib", "pyarrow")
REFERENCE = "numpy"
TARGET = ("confcal + auroc", 2.0)


def wall_time(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def loaded(code: str) -> tuple[int, list[str]]:
    probe = (f"{code}\nimport sys\n"
             f"print(len(sys.modules), *[m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.split()
    return int(out[0]), out[1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs per command")
    args = parser.parse_args()

    for _, code in COMMANDS:
        wall_time(code)  # warm-up: the first run reads every file from disk
    times: dict[str, list[float]] = {label: [] for label, _ in COMMANDS}
    for _ in range(args.runs):
        for label, code in COMMANDS:
            times[label].append(wall_time(code))
    median = {label: statistics.median(ts) for label, ts in times.items()}

    width = max(len(code) for _, code in COMMANDS) + len('python -c ""')
    print(f"Python {sys.version.split()[0]}, median of {args.runs} fresh processes")
    print(f"{'command':<{width}} {'ms':>7} {'x numpy':>8} {'modules':>8}  heavy modules loaded")
    for label, code in COMMANDS:
        n_modules, heavy = loaded(code)
        command = f'python -c "{code}"'
        ratio = median[label] / median[REFERENCE]
        print(f"{command:<{width}} {1000 * median[label]:7.1f} {ratio:7.2f}x {n_modules:8d}  "
              f"{', '.join(heavy) or '-'}")
    label, limit = TARGET
    ratio = median[label] / median[REFERENCE]
    verdict = "met" if ratio <= limit else "NOT met"
    print(f"\n{label}: {ratio:.2f}x numpy (target <= {limit:g}x): {verdict}")


if __name__ == "__main__":
    main()
