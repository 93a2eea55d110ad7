"""Diagrams of a dataflow's structure (``bytewax.visualize``).

:func:`to_mermaid`, :func:`to_plantuml` and :func:`to_json` draw a :class:`~.dataflow.Dataflow`
as Bytewax 0.21.1 does, the same text for the same flow; :func:`to_rendered` gives the data model
they draw from, with every port linked to the ports its streams come from. From a shell,
``python -m fs_compat.bytewax.visualize module:flow [-o json|mermaid|plantuml] [-r]`` prints one
(the import string is ``python -m fs_compat.bytewax.run``'s).

>>> import fs_compat.bytewax.operators as op
>>> from fs_compat.bytewax.dataflow import Dataflow
>>> from fs_compat.bytewax.testing import TestingSink, TestingSource
>>> flow = Dataflow("eg")
>>> s = op.input("inp", flow, TestingSource([1, 2]))
>>> op.output("out", op.map("dbl", s, lambda x: 2 * x), TestingSink([]))
>>> print(to_mermaid(flow))
flowchart TD
subgraph "eg (Dataflow)"
eg.inp["inp (input)"]
eg.dbl["dbl (map)"]
eg.inp -- "down → up" --> eg.dbl
eg.out["out (output)"]
eg.dbl -- "down → up" --> eg.out
end
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from .dataflow import Dataflow as _Dataflow
from .dataflow import Operator as _Operator

__all__ = [
    "RenderedDataflow",
    "RenderedOperator",
    "RenderedPort",
    "to_json",
    "to_mermaid",
    "to_plantuml",
    "to_rendered",
]


@dataclass(frozen=True)
class RenderedPort:
    """A port with the ids of the ports (``from_port_ids``) and streams (``from_stream_ids``) that
    feed it. An output port of a step without sub-steps is fed by nothing drawn."""

    port_name: str
    port_id: str
    from_port_ids: list[str]
    from_stream_ids: list[str]


@dataclass(frozen=True)
class RenderedOperator:
    """A step with its ports resolved and its sub-steps rendered."""

    op_type: str
    step_name: str
    step_id: str
    inp_ports: list[RenderedPort]
    out_ports: list[RenderedPort]
    substeps: list[RenderedOperator]


@dataclass(frozen=True)
class RenderedDataflow:
    """A dataflow's top-level steps, rendered."""

    flow_id: str
    substeps: list[RenderedOperator]


class _Origins:
    """Which port a stream comes from, seen from one scope: a step's own sub-steps see the streams
    of its inputs as coming from its input ports; anything not found falls back to the enclosing
    scope."""

    def __init__(self, parent: _Origins | None = None) -> None:
        self._own: dict[str, str] = {}
        self._parent = parent

    def set(self, stream_id: str, port_id: str) -> None:
        self._own[stream_id] = port_id

    def get(self, stream_id: str) -> str:
        scope: _Origins | None = self
        while scope is not None:
            if stream_id in scope._own:
                return scope._own[stream_id]
            scope = scope._parent
        raise KeyError(f"stream {stream_id!r} has no step that makes it")


def _render(step: _Operator, origins: _Origins) -> RenderedOperator:
    inp = [
        RenderedPort(
            name, p.port_id, [origins.get(s) for s in p.stream_ids.values()], list(p.stream_ids.values())
        )
        for name, p in step.ups.items()
    ]
    for p in step.dwns.values():
        for s in p.stream_ids.values():
            origins.set(s, p.port_id)
    inner = _Origins(origins)
    for p in step.ups.values():
        for s in p.stream_ids.values():
            inner.set(s, p.port_id)
    substeps = [_render(sub, inner) for sub in step.substeps]
    out = []
    for name, p in step.dwns.items():
        streams = list(p.stream_ids.values()) if substeps else []
        out.append(RenderedPort(name, p.port_id, [inner.get(s) for s in streams], streams))
    return RenderedOperator(step.op_type, step.step_name, step.step_id, inp, out, substeps)


def to_rendered(flow: _Dataflow) -> RenderedDataflow:
    """The flow as a tree of rendered steps whose ports name the ports that feed them."""
    origins = _Origins()
    return RenderedDataflow(flow.flow_id, [_render(step, origins) for step in flow.substeps])


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, RenderedDataflow):
        return {"typ": "RenderedDataflow", "flow_id": obj.flow_id, "substeps": obj.substeps}
    if isinstance(obj, RenderedOperator):
        return {
            "typ": "RenderedOperator",
            "op_type": obj.op_type,
            "step_name": obj.step_name,
            "step_id": obj.step_id,
            "inp_ports": obj.inp_ports,
            "out_ports": obj.out_ports,
            "substeps": obj.substeps,
        }
    if isinstance(obj, RenderedPort):
        return {
            "typ": "RenderedPort",
            "port_name": obj.port_name,
            "port_id": obj.port_id,
            "from_port_ids": obj.from_port_ids,
            "from_stream_ids": obj.from_stream_ids,
        }
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def to_json(flow: _Dataflow) -> str:
    """The rendered flow (:func:`to_rendered`) as indented JSON; every object has a ``typ`` key."""
    return json.dumps(to_rendered(flow), default=_jsonable, indent=2)


def _plantuml_lines(step: RenderedOperator, recursive: bool) -> list[str]:
    body = [f"portin {p.port_id}" for p in step.inp_ports]
    body += [f"portout {p.port_id}" for p in step.out_ports]
    body += _plantuml_links(step.inp_ports)
    if recursive:
        for sub in step.substeps:
            body += _plantuml_lines(sub, recursive)
        body += _plantuml_links(step.out_ports)
    head = [f"component {step.step_id} [", f"    {step.step_id} ({step.op_type})", "]"]
    return [*head, f"component {step.step_id} {{", *("    " + line for line in body), "}"]


def _plantuml_links(ports: list[RenderedPort]) -> list[str]:
    return [
        f"{src} --> {p.port_id} : {stream}"
        for p in ports
        for src, stream in zip(p.from_port_ids, p.from_stream_ids, strict=True)
    ]


def to_plantuml(flow: _Dataflow, recursive: bool = False) -> str:
    """A PlantUML component diagram of the flow; ``recursive`` also draws every step's sub-steps."""
    lines = ["@startuml"]
    for step in to_rendered(flow).substeps:
        lines += _plantuml_lines(step, recursive)
    lines.append("@enduml")
    return "\n".join(lines)


def to_mermaid(flow: _Dataflow) -> str:
    """A Mermaid flowchart of the flow's top-level steps (sub-steps are not drawn)."""
    steps = to_rendered(flow).substeps
    owner: dict[str, tuple[RenderedOperator, RenderedPort]] = {
        p.port_id: (step, p) for step in steps for p in [*step.inp_ports, *step.out_ports]
    }
    lines = ["flowchart TD", f'subgraph "{flow.flow_id} (Dataflow)"']
    for step in steps:
        lines.append(f'{step.step_id}["{step.step_name} ({step.op_type})"]')
        for p in step.inp_ports:
            for src in p.from_port_ids:
                src_step, src_port = owner[src]
                lines.append(
                    f'{src_step.step_id} -- "{src_port.port_name} → {p.port_name}" --> {step.step_id}'
                )
    lines.append("end")
    return "\n".join(lines)


_Format = Literal["json", "mermaid", "plantuml"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m fs_compat.bytewax.visualize",
        description="Print a diagram of a dataflow's structure: Mermaid (https://mermaid.js.org/), "
        "PlantUML (https://plantuml.com/) or JSON (fs-compat's and Bytewax's rendered model).",
    )
    parser.add_argument(
        "import_str",
        help="the dataflow: <module or file>[:<variable or factory call>], e.g. src.dataflow, "
        "src.dataflow:flow or src.dataflow:get_flow('arg')",
    )
    parser.add_argument(
        "-o",
        "--output-format",
        choices=get_args(_Format),
        default="mermaid",
        help="output format; default mermaid",
    )
    parser.add_argument(
        "-r",
        "--recursive",
        action="store_true",
        help="also draw sub-steps (PlantUML only: Mermaid never does, JSON always does)",
    )
    return parser


def _main(argv: Sequence[str] | None = None) -> None:
    """``python -m fs_compat.bytewax.visualize``: print the diagram of the dataflow named."""
    from .run import _locate_dataflow, _prepare_import

    args = _parser().parse_args(argv)
    flow = _locate_dataflow(*_prepare_import(args.import_str))
    if args.output_format == "json":
        print(to_json(flow))
    elif args.output_format == "plantuml":
        print(to_plantuml(flow, args.recursive))
    else:
        print(to_mermaid(flow))


if __name__ == "__main__":
    _main()
