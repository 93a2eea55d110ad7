"""The demo's bundled sample, ``transactions.csv``: generated deterministically (seeded) by
``generate()``; ``python -m fs_compat.demo.sample`` writes it again.

Transactions of ``ACCOUNTS`` accounts arrive one every 1 to 6 seconds, starting at
``START_MS``. Ordinary amounts are between 1.00 and 500.00; planted among them, per account:

- fraud: a transaction under 1.00, then, 5 to 45 seconds later, one over 500.00 (an alert);
- too late: under 1.00, then over 500.00 after 1.5 to 5 minutes (no alert: the flag expired);
- interrupted: under 1.00, an ordinary amount, then over 500.00, all within a minute (no alert);
- small only: under 1.00, then an ordinary amount (no alert);
- large only: over 500.00 after an ordinary amount (no alert);
- cut off: the last ``CUT_OFF`` transactions are under 1.00, so those accounts are still flagged
  (and hold state) when the input ends.

An account's transactions after a planted one are exactly those of its pattern, so a small
transaction is always followed, for that account, by the one its pattern says. No account's
next transaction after a small one comes between 55 and 70 seconds later, so whether it is
"within a minute" never depends on when, within a second or two, the clock checks it.
"""

from __future__ import annotations

import random
import sys

SEED = 20240101
COUNT = 3000
ACCOUNTS = 20
#: 2024-01-01T00:00:00Z, in epoch milliseconds.
START_MS = 1_704_067_200_000
CUT_OFF = 2
FILE_NAME = "transactions.csv"
HEADER = "account_id,timestamp,amount"

#: Pattern name -> probability per transaction, and its follow-ups: ``(delay range in ms,
#: amount kind)`` after the first (small or ordinary) transaction.
_PATTERNS: dict[str, tuple[float, str, list[tuple[tuple[int, int], str]]]] = {
    "fraud": (0.006, "small", [((5_000, 45_000), "large")]),
    "too late": (0.004, "small", [((90_000, 300_000), "large")]),
    "interrupted": (0.003, "small", [((5_000, 20_000), "ordinary"), ((5_000, 20_000), "large")]),
    "small only": (0.004, "small", [((5_000, 40_000), "ordinary")]),
    "large only": (0.004, "ordinary", [((5_000, 120_000), "large")]),
}


def _amount(rng: random.Random, kind: str) -> float:
    if kind == "small":
        return rng.randint(1, 99) / 100
    if kind == "large":
        return rng.randint(50_100, 200_000) / 100
    # Ordinary: mostly tens of units, never under 1.00 nor over 500.00.
    return min(500.0, max(1.0, round(rng.lognormvariate(3.5, 1.0), 2)))


def generate(seed: int = SEED, count: int = COUNT, accounts: int = ACCOUNTS) -> list[tuple[int, int, float]]:
    """``count`` transactions ``(account_id, timestamp, amount)`` in timestamp order (see the
    module docstring); the same for the same arguments."""
    rng = random.Random(seed)
    rows: list[tuple[int, int, float]] = []
    # Per account in a pattern: when its next transaction is due, and what remains of it.
    pending: dict[int, tuple[int, list[tuple[tuple[int, int], str]]]] = {}
    now = START_MS
    while len(rows) < count - CUT_OFF:
        now += rng.randint(1_000, 6_000)
        due = sorted((when, account) for account, (when, _) in pending.items() if when <= now)
        if due:
            account = due[0][1]
            _, rest = pending.pop(account)
            (_, kind), rest = rest[0], rest[1:]
            rows.append((account, now, _amount(rng, kind)))
            if rest:
                pending[account] = (now + rng.randint(*rest[0][0]), rest)
            continue
        account = rng.choice([a for a in range(1, accounts + 1) if a not in pending])
        roll, kind, steps = rng.random(), "ordinary", []
        for chance, first, follow_ups in _PATTERNS.values():
            if roll < chance:
                kind, steps = first, follow_ups
                break
            roll -= chance
        rows.append((account, now, _amount(rng, kind)))
        if steps:
            pending[account] = (now + rng.randint(*steps[0][0]), steps)
    for _ in range(min(CUT_OFF, count)):
        now += rng.randint(1_000, 6_000)
        account = rng.choice([a for a in range(1, accounts + 1) if a not in pending])
        pending[account] = (now, [])
        rows.append((account, now, _amount(rng, "small")))
    _check(rows)
    return rows


def _check(rows: list[tuple[int, int, float]]) -> None:
    """The property the module docstring promises (a bad seed fails here, not in a test)."""
    last: dict[int, tuple[int, float]] = {}
    for account, ts, amount in rows:
        before = last.get(account)
        if before is not None and before[1] < 1.0 and 55_000 <= ts - before[0] <= 70_000:
            raise AssertionError(f"account {account}: {ts - before[0]} ms after a small transaction")
        last[account] = (ts, amount)


def render(rows: list[tuple[int, int, float]]) -> str:
    """The CSV text of ``rows``: a header, then ``account_id,timestamp,amount`` lines."""
    return "".join([HEADER + "\n", *(f"{a},{ts},{amount:.2f}\n" for a, ts, amount in rows)])


if __name__ == "__main__":
    from pathlib import Path

    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name(FILE_NAME)
    target.write_text(render(generate()), encoding="utf-8", newline="\n")
    print(f"wrote {target}")
