"""``fs_compat.bytewax.visualize``: Bytewax 0.21.1's diagrams of a flow, the same text.

The expected texts are what ``python -m bytewax.visualize`` printed for the same flow on
Bytewax 0.21.1 (``shop`` below: a branch whose two sides meet again, a keyed side, a merge).
"""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

import fs_compat.bytewax.operators as op
from fs_compat.bytewax.dataflow import Dataflow, Stream, operator
from fs_compat.bytewax.testing import TestingSink, TestingSource
from fs_compat.bytewax.visualize import _main as main
from fs_compat.bytewax.visualize import to_json, to_mermaid, to_plantuml, to_rendered


def shop() -> Dataflow:
    flow = Dataflow("shop")
    orders = op.input("orders", flow, TestingSource([("ann", 3), ("bob", 5)]))
    big = op.branch("split", orders, lambda o: o[1] > 4)
    keyed = op.key_on("by_name", big.trues, lambda o: o[0])
    both = op.merge("both", big.falses, op.key_rm("unkey", keyed))
    op.output("sink", both, TestingSink([]))
    return flow


flow = shop()  # for the command line test

SHOP_MERMAID = """\
flowchart TD
subgraph "shop (Dataflow)"
shop.orders["orders (input)"]
shop.split["split (branch)"]
shop.orders -- "down → up" --> shop.split
shop.by_name["by_name (key_on)"]
shop.split -- "trues → up" --> shop.by_name
shop.unkey["unkey (key_rm)"]
shop.by_name -- "down → up" --> shop.unkey
shop.both["both (merge)"]
shop.split -- "falses → ups" --> shop.both
shop.unkey -- "down → ups" --> shop.both
shop.sink["sink (output)"]
shop.both -- "down → up" --> shop.sink
end"""


def test_mermaid_draws_top_level_steps_and_the_ports_that_link_them() -> None:
    assert to_mermaid(shop()) == SHOP_MERMAID


def test_plantuml_labels_links_with_the_stream_that_flows_there() -> None:
    text = to_plantuml(shop())
    assert text.startswith("@startuml\ncomponent shop.orders [\n    shop.orders (input)\n]\n")
    assert text.endswith("@enduml")
    # The stream out of key_on is made by its innermost sub-step; non-recursive diagrams still name it.
    assert (
        textwrap.dedent("""\
        component shop.unkey {
            portin shop.unkey.up
            portout shop.unkey.down
            shop.by_name.down --> shop.unkey.up : shop.by_name.map.flat_map_batch.down
        }""")
        in text
    )
    assert (
        textwrap.dedent("""\
        component shop.both {
            portin shop.both.ups
            portout shop.both.down
            shop.split.falses --> shop.both.ups : shop.split.falses
            shop.unkey.down --> shop.both.ups : shop.unkey.map.flat_map_batch.down
        }""")
        in text
    )
    assert "shop.by_name.map" not in text.replace("shop.by_name.map.flat_map_batch.down", "")


def test_recursive_plantuml_nests_sub_steps_and_links_inner_ports_to_outer_ones() -> None:
    text = to_plantuml(shop(), recursive=True)
    start = text.index("component shop.by_name {")
    block = text[start : text.index("\n}", start) + 2]
    assert block == textwrap.dedent("""\
        component shop.by_name {
            portin shop.by_name.up
            portout shop.by_name.down
            shop.split.trues --> shop.by_name.up : shop.split.trues
            component shop.by_name.map [
                shop.by_name.map (map)
            ]
            component shop.by_name.map {
                portin shop.by_name.map.up
                portout shop.by_name.map.down
                shop.by_name.up --> shop.by_name.map.up : shop.split.trues
                component shop.by_name.map.flat_map_batch [
                    shop.by_name.map.flat_map_batch (flat_map_batch)
                ]
                component shop.by_name.map.flat_map_batch {
                    portin shop.by_name.map.flat_map_batch.up
                    portout shop.by_name.map.flat_map_batch.down
                    shop.by_name.map.up --> shop.by_name.map.flat_map_batch.up : shop.split.trues
                }
                shop.by_name.map.flat_map_batch.down --> shop.by_name.map.down : INNER
            }
            shop.by_name.map.down --> shop.by_name.down : INNER
        }""").replace("INNER", "shop.by_name.map.flat_map_batch.down")


def _port(name: str, port_id: str, from_ports: list[str], from_streams: list[str]) -> dict[str, object]:
    return {
        "typ": "RenderedPort",
        "port_name": name,
        "port_id": port_id,
        "from_port_ids": from_ports,
        "from_stream_ids": from_streams,
    }


def test_json_has_every_step_with_resolved_ports() -> None:
    doc = json.loads(to_json(shop()))
    assert doc["typ"] == "RenderedDataflow"
    assert doc["flow_id"] == "shop"
    assert [s["step_id"] for s in doc["substeps"]] == [
        "shop.orders",
        "shop.split",
        "shop.by_name",
        "shop.unkey",
        "shop.both",
        "shop.sink",
    ]
    key_on = doc["substeps"][2]
    inner = "shop.by_name.map.flat_map_batch.down"
    assert key_on == {
        "typ": "RenderedOperator",
        "op_type": "key_on",
        "step_name": "by_name",
        "step_id": "shop.by_name",
        "inp_ports": [_port("up", "shop.by_name.up", ["shop.split.trues"], ["shop.split.trues"])],
        "out_ports": [_port("down", "shop.by_name.down", ["shop.by_name.map.down"], [inner])],
        "substeps": [
            {
                "typ": "RenderedOperator",
                "op_type": "map",
                "step_name": "map",
                "step_id": "shop.by_name.map",
                "inp_ports": [_port("up", "shop.by_name.map.up", ["shop.by_name.up"], ["shop.split.trues"])],
                "out_ports": [_port("down", "shop.by_name.map.down", [inner], [inner])],
                "substeps": [
                    {
                        "typ": "RenderedOperator",
                        "op_type": "flat_map_batch",
                        "step_name": "flat_map_batch",
                        "step_id": "shop.by_name.map.flat_map_batch",
                        "inp_ports": [
                            _port(
                                "up",
                                "shop.by_name.map.flat_map_batch.up",
                                ["shop.by_name.map.up"],
                                ["shop.split.trues"],
                            )
                        ],
                        "out_ports": [_port("down", inner, [], [])],
                        "substeps": [],
                    }
                ],
            }
        ],
    }
    # A step with several streams on one port lists them in argument order; an output has no outputs.
    merge, sink = doc["substeps"][4], doc["substeps"][5]
    assert merge["inp_ports"] == [
        _port(
            "ups",
            "shop.both.ups",
            ["shop.split.falses", "shop.unkey.down"],
            ["shop.split.falses", "shop.unkey.map.flat_map_batch.down"],
        )
    ]
    assert merge["out_ports"] == [_port("down", "shop.both.down", [], [])]
    assert sink["out_ports"] == []


def test_a_users_operator_is_drawn_with_its_own_name_and_inner_steps() -> None:
    @operator
    def doubled(step_id: str, up: Stream[int]) -> Stream[int]:
        return op.merge("again", up, op.map("copy", up, lambda x: x))

    f = Dataflow("own")
    s = doubled("twice", op.input("nums", f, TestingSource([1])))
    op.output("out", s, TestingSink([]))
    rendered = to_rendered(f)
    step = rendered.substeps[1]
    assert (step.op_type, step.step_name) == ("doubled", "twice")
    assert [sub.step_id for sub in step.substeps] == ["own.twice.copy", "own.twice.again"]
    (again_ups,) = step.substeps[1].inp_ports
    # Inside the step, its input stream comes from the step's own input port.
    assert again_ups.from_port_ids == ["own.twice.up", "own.twice.copy.down"]
    assert step.out_ports[0].from_port_ids == ["own.twice.again.down"]


@pytest.mark.parametrize(
    ("args", "expected_start"),
    [([], "flowchart TD\n"), (["-o", "plantuml"], "@startuml\n"), (["-o", "json"], "{\n")],
)
def test_command_line_prints_the_chosen_format(
    args: list[str], expected_start: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    main([f"{__file__}:flow", *args])
    out = capsys.readouterr().out
    assert out.startswith(expected_start)
    if not args:
        assert out == SHOP_MERMAID + "\n"
