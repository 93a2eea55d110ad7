"""The bundled sample of the flagship demo is what its seeded generator makes, and it holds the
patterns the demo is about."""

from __future__ import annotations

import csv
from importlib import resources

from fs_compat import demo
from fs_compat.demo import sample


def _committed() -> str:
    return resources.files("fs_compat.demo").joinpath(demo.SAMPLE_FILE).read_text(encoding="utf-8")


def test_committed_sample_is_the_generators_output() -> None:
    assert sample.FILE_NAME == demo.SAMPLE_FILE
    assert _committed() == sample.render(sample.generate())


def test_generator_is_deterministic_and_seeded() -> None:
    assert sample.generate(seed=7, count=200) == sample.generate(seed=7, count=200)
    assert sample.generate(seed=7, count=200) != sample.generate(seed=8, count=200)


def test_sample_shape() -> None:
    rows = list(csv.DictReader(_committed().splitlines()))
    assert len(rows) == sample.COUNT == 3000
    assert {int(r["account_id"]) for r in rows} == set(range(1, sample.ACCOUNTS + 1))
    stamps = [int(r["timestamp"]) for r in rows]
    assert stamps == sorted(stamps)
    # Small-then-large pairs both within a minute (fraud) and later (the timer matters).
    last: dict[str, tuple[int, float]] = {}
    quick = late = 0
    for r in rows:
        ts, amount = int(r["timestamp"]), float(r["amount"])
        before = last.get(r["account_id"])
        if before is not None and before[1] < 1.0 and amount > 500.0:
            if ts - before[0] < 60_000:
                quick += 1
            else:
                late += 1
        last[r["account_id"]] = (ts, amount)
    assert quick >= 10
    assert late >= 10


def test_load_sample_reads_rows() -> None:
    rows = demo.load_sample()
    assert len(rows) == 3000
    first = next(csv.DictReader(_committed().splitlines()))
    assert rows[0].account_id == int(first["account_id"])
    assert rows[0].timestamp == int(first["timestamp"])
    assert rows[0].amount == float(first["amount"])
