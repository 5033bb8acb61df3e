"""Benchmark: orchestrator.loops.similarity vs seed 000's difflib baseline on generated logs.

Run: uv run python bench/bench_similarity.py [--sizes 10000,100000,1000000] [--timeout 60]

Each size gets two log pairs, both from the "same" agent run with different timestamps, PIDs,
temp paths and durations: one pair ending with the same failure, one ending with different
failures. The baseline is exactly the seed's `SequenceMatcher(None, a, b).ratio()` on the raw
texts, run in a subprocess so that a size it cannot finish within --timeout is reported as
"> N s" instead of hanging the benchmark.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from orchestrator.loops import similarity

TEMPLATES = (
    "{ts} INFO [{pid}] collecting tests in {tmp}/work/tests/test_{k}.py",
    "{ts} DEBUG [{pid}] tool call Read {tmp}/work/src/module_{k}.py ({n} lines) in {dur}s",
    "{ts} INFO [{pid}] step {k}: ran `ruff check src` ok in {ms}ms",
    "{ts} WARN [{pid}] retrying request id {uuid} after {dur}s",
    "{ts} INFO [{pid}] wrote {tmp}/work/build/out_{k}.json (sha {sha})",
    "tests/test_{k}.py::test_case_{n} PASSED [{n}%]",
)

SAME_END = """\
Traceback (most recent call last):
  File "{tmp}/work/src/app/model.py", line {line}, in load
    import pandas
ModuleNotFoundError: No module named 'pandas'
{ts} ERROR [{pid}] attempt failed after {dur}s (object at 0x{addr:x})
"""

OTHER_END = """\
=========================== short test summary info ============================
FAILED tests/test_api.py::test_login - assert response.status_code == 201
{ts} ERROR [{pid}] attempt failed after {dur}s
"""


def _fields(rng: random.Random, k: int) -> dict[str, object]:
    return {
        "ts": f"2024-05-{rng.randint(10, 28)}T{rng.randint(10, 23)}:{rng.randint(10, 59)}:"
        f"{rng.randint(10, 59)}.{rng.randint(100, 999)}Z",
        "pid": rng.randint(1000, 99999),
        "tmp": f"/tmp/tmp{rng.getrandbits(40):010x}",
        "dur": f"{rng.random() * 9:.2f}",
        "ms": rng.randint(1, 999),
        "uuid": f"{rng.getrandbits(32):08x}-1d3e-4a5b-8c7d-{rng.getrandbits(48):012x}",
        "sha": f"{rng.getrandbits(160):040x}",
        "addr": rng.getrandbits(48),
        "line": rng.randint(1, 400),
        "k": k,
        "n": k % 97,
    }


def make_log(size: int, seed: int, ending: str) -> str:
    """A log of about `size` characters: the same steps each seed, different run details."""
    rng = random.Random(seed)
    lines: list[str] = []
    total = 0
    k = 0
    while total < size:
        line = TEMPLATES[k % len(TEMPLATES)].format(**_fields(rng, k))
        lines.append(line)
        total += len(line) + 1
        k += 1
    lines.append(ending.format(**_fields(rng, k)))
    return "\n".join(lines)[-size:]


BASELINE = """
import json, sys, time
from difflib import SequenceMatcher
a = open(sys.argv[1], encoding="utf-8").read()
b = open(sys.argv[2], encoding="utf-8").read()
start = time.perf_counter()
ratio = SequenceMatcher(None, a, b).ratio()
print(json.dumps({"seconds": time.perf_counter() - start, "ratio": ratio}))
"""


def run_baseline(a: str, b: str, timeout: float) -> tuple[float | None, float | None]:
    with tempfile.TemporaryDirectory() as tmp:
        pa, pb = Path(tmp, "a.log"), Path(tmp, "b.log")
        pa.write_text(a, encoding="utf-8")
        pb.write_text(b, encoding="utf-8")
        try:
            proc = subprocess.run(
                [sys.executable, "-c", BASELINE, str(pa), str(pb)],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=True,
            )
        except subprocess.TimeoutExpired:
            return None, None
    data = json.loads(proc.stdout)
    return float(data["seconds"]), float(data["ratio"])


def run_ours(a: str, b: str, repeats: int = 3) -> tuple[float, float]:
    best = float("inf")
    value = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        value = similarity(a, b)
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    header = (
        f"{'size':>9} {'pair':<14} {'difflib s':>10} {'ours s':>9} {'speed-up':>9} "
        f"{'difflib sim':>11} {'ours sim':>9}"
    )
    print(header)
    print("-" * len(header))
    for size in sizes:
        base = make_log(size, seed=1, ending=SAME_END)
        pairs = {
            "same failure": make_log(size, seed=2, ending=SAME_END),
            "other failure": make_log(size, seed=2, ending=OTHER_END),
        }
        for name, other in pairs.items():
            d_sec, d_sim = run_baseline(base, other, args.timeout)
            o_sec, o_sim = run_ours(base, other)
            d_sec_s = f"{d_sec:.4f}" if d_sec is not None else f"> {args.timeout:.0f} s"
            speed = (
                f"{d_sec / o_sec:,.0f}x" if d_sec is not None else f"> {args.timeout / o_sec:,.0f}x"
            )
            d_sim_s = f"{d_sim:.3f}" if d_sim is not None else "-"
            print(
                f"{size:>9,} {name:<14} {d_sec_s:>10} {o_sec:>9.4f} {speed:>9} "
                f"{d_sim_s:>11} {o_sim:>9.3f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
