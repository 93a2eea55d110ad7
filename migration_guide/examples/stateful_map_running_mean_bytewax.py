"""A running mean per key with ``op.stateful_map``: the mean of each sensor's last three readings."""

from __future__ import annotations

import bytewax.operators as op
from bytewax.dataflow import Dataflow
from bytewax.testing import TestingSink, TestingSource, run_main

READINGS = [
    ("s1", 20.0),
    ("s2", 31.0),
    ("s1", 24.0),
    ("s1", 22.0),
    ("s2", 29.0),
    ("s1", 19.0),
    ("s2", 35.0),
    ("s1", 18.0),
]


def running_mean(last_3: list[float] | None, value: float) -> tuple[list[float], float]:
    """Keeps the last three values of the key; emits their mean."""
    last_3 = [*(last_3 or []), value][-3:]
    return last_3, sum(last_3) / len(last_3)


def main() -> None:
    flow = Dataflow("running_mean")
    readings = op.input("readings", flow, TestingSource(READINGS))
    keyed = op.key_on("by_sensor", readings, lambda r: r[0])
    values = op.map_value("temperature", keyed, lambda r: r[1])
    means = op.stateful_map("running_mean", values, running_mean)
    out: list[tuple[str, float]] = []
    op.output("out", means, TestingSink(out))
    run_main(flow)
    # The means of each sensor in order; sensors sorted (items of different keys may interleave in any order).
    for sensor, mean in sorted(out, key=lambda kv: kv[0]):
        print(f"{sensor}: {mean:.2f}")


if __name__ == "__main__":
    main()
