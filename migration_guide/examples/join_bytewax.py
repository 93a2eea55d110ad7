"""``op.join`` in ``running`` mode: a user's latest name and email, re-emitted whenever either changes."""

from __future__ import annotations

import bytewax.operators as op
from bytewax.dataflow import Dataflow
from bytewax.testing import TestingSink, TestingSource, run_main

# (user id, name) and (user id, email), each in the order they change. The two inputs are read in
# turns; a user's name and email changes are two or more items apart, so their order is the same
# however the turns go.
NAMES = [
    ("u1", "Ada"),
    ("u2", "Grace"),
    ("u3", "Edsger"),
    ("u4", "Barbara"),
    ("u6", "Niklaus"),
    ("u1", "Ada L."),
]
EMAILS = [
    ("u3", "ed@example.org"),
    ("u5", "ken@example.org"),
    ("u1", "ada@example.org"),
    ("u2", "grace@example.org"),
    ("u5", "kt@example.org"),
    ("u2", "hopper@example.org"),
]


def main() -> None:
    flow = Dataflow("join")
    names = op.key_on("name_by_user", op.input("names", flow, TestingSource(NAMES)), lambda u: u[0])
    emails = op.key_on("email_by_user", op.input("emails", flow, TestingSource(EMAILS)), lambda u: u[0])
    joined = op.join(
        "join",
        op.map_value("name", names, lambda u: u[1]),
        op.map_value("email", emails, lambda u: u[1]),
        emit_mode="running",
    )
    out: list[tuple[str, tuple[str | None, str | None]]] = []
    op.output("out", joined, TestingSink(out))
    run_main(flow)
    # Each user's rows in the order they were emitted; users sorted (their rows may interleave in any order).
    for user, (name, email) in sorted(out, key=lambda kv: kv[0]):
        print(f"{user}: {name} <{email}>")


if __name__ == "__main__":
    main()
