"""Holds Python's models to the core's own contract (`_core.contract()`, written by
`crates/dbscale-core/src/contract.rs`): the JSON Schema the core derives from its Rust types is
compared with the one pydantic derives from the models here, field by field.

Both schemas are walked in parallel from their roots, so a Rust struct and its Python model may
have different names (`LatencySummary` and `LatencyFigures`); what must agree is each field's name,
kind (integer, number, string, boolean, list, map, object, enumeration), whether it may be null,
its bounds (the integer type's own range included) and, for what Python sends (the
configuration), whether it is required and its default. `python -m dbscale.core.contract` prints
the differences and exits 1 when there are any (`make lint` runs it).

Two more things must agree: every document the core publishes has its Python model (a new
answer cannot go unnoticed), and each error kind's hint is the same words in both languages
(Python states it when it raises that error itself).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from dbscale.core import answers
from dbscale.core.config import RunConfig
from dbscale.core.result import Interval, RunResult
from dbscale.errors import error_class_for_kind

# What each document of the contract is in Python, and whether Python sends it (then defaults and
# required fields must agree too) or only reads it.
SENT: dict[str, type[BaseModel]] = {"config": RunConfig}
READ: dict[str, type[BaseModel]] = {
    "result": RunResult,
    "interval": Interval,
    "prepare": answers.DataSummary,
    "check": answers.CheckReport,
    "probe": answers.ProbeAnswer,
    "histogram_figures": answers.HistogramFigures,
    "counts_above": answers.CountsAbove,
    "micro_cpu": answers.CpuScore,
    "micro_net_rr": answers.RequestResponse,
    "micro_net_streams": answers.Streams,
    "workload": answers.WorkloadEntry,
}

# The ranges integer formats imply (schemars writes `format`; pydantic writes none).
_FORMAT_RANGES = {
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "uint": (0, 2**64 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "int": (-(2**63), 2**63 - 1),
}
_ANY = "any"


class Node(BaseModel):
    """One JSON Schema node, as much of it as the comparison reads (both dialects' keywords)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)

    ref: str | None = Field(default=None, alias="$ref")
    type: str | list[str] | None = None
    format: str | None = None
    properties: dict[str, Node | bool] = Field(default_factory=dict)
    required: list[str] = Field(default_factory=list)
    items: Node | bool | None = None
    additional: Node | bool | None = Field(default=None, alias="additionalProperties")
    any_of: list[Node] = Field(default_factory=list, alias="anyOf")
    one_of: list[Node] = Field(default_factory=list, alias="oneOf")
    all_of: list[Node] = Field(default_factory=list, alias="allOf")
    enum: list[JsonValue] | None = None
    const: JsonValue = None
    default: JsonValue = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    exclusive_minimum: int | float | None = Field(default=None, alias="exclusiveMinimum")
    definitions: dict[str, Node] = Field(default_factory=dict)
    defs: dict[str, Node] = Field(default_factory=dict, alias="$defs")

    def merged(self, under: Node) -> Node:
        """This node's own keywords over `under`'s (a `$ref` or `allOf` with siblings)."""
        return under.model_copy(update={k: getattr(self, k) for k in self.model_fields_set})


@dataclass(frozen=True)
class Shape:
    """One field's shape, comparable across the two schema dialects."""

    kind: str  # integer, number, string, boolean, list, map, object, enum, any
    nullable: bool
    low: float | None = None
    low_exclusive: bool = False
    high: float | None = None
    enum: tuple[str, ...] = ()
    item: Node | None = None  # the element's schema (list, map) or the object's


class _Schema:
    """A JSON Schema document with its definitions, for resolving `$ref`s."""

    def __init__(self, root: Node) -> None:
        self.definitions = {**root.definitions, **root.defs}

    def resolve(self, node: Node | bool | None) -> Node:
        if not isinstance(node, Node):
            return Node()
        while node.ref is not None:
            target = self.definitions[node.ref.rsplit("/", 1)[-1]]
            node = node.model_copy(update={"ref": None}).merged(target)
        if len(node.all_of) == 1:
            node = node.model_copy(update={"all_of": []}).merged(self.resolve(node.all_of[0]))
        return node

    def shape(self, given: Node | bool | None) -> Shape:
        node = self.resolve(given)
        options = node.any_of or node.one_of
        if options:
            return self._either(options)
        kinds = node.type
        nullable = False
        if isinstance(kinds, list):
            nullable = "null" in kinds
            rest = [k for k in kinds if k != "null"]
            kinds = rest[0] if len(rest) == 1 else None
        if node.enum is not None:
            values = tuple(sorted(str(v) for v in node.enum if v is not None))
            return Shape("enum", nullable or None in node.enum, enum=values)
        if kinds == "integer":
            low, high = _FORMAT_RANGES.get(node.format or "", (None, None))
            return _bounded(Shape("integer", nullable, low, False, high), node)
        if kinds == "number":
            return _bounded(Shape("number", nullable), node)
        if kinds == "array":
            return Shape("list", nullable, item=self.resolve(node.items))
        if kinds == "object" and not node.properties:
            return Shape("map", nullable, item=self.resolve(node.additional))
        if kinds == "object":
            return Shape("object", nullable, item=node)
        if kinds in ("string", "boolean"):
            return Shape(kinds, nullable)
        return Shape(_ANY, nullable)

    def _either(self, options: list[Node]) -> Shape:
        resolved = [self.resolve(o) for o in options]
        rest = [o for o in resolved if o.type != "null"]
        nullable = len(rest) < len(resolved)
        if rest and all(o.enum is not None or o.const is not None for o in rest):
            values = [v for o in rest for v in (o.enum if o.enum is not None else [o.const])]
            return Shape("enum", nullable, enum=tuple(sorted(str(v) for v in values)))
        if len(rest) == 1:
            inner = self.shape(rest[0])
            return replace(inner, nullable=inner.nullable or nullable)
        return Shape(_ANY, nullable)


def _bounded(shape: Shape, node: Node) -> Shape:
    low, high, exclusive = shape.low, shape.high, shape.low_exclusive
    if node.minimum is not None and (low is None or node.minimum >= low):
        low, exclusive = node.minimum, False
    if node.exclusive_minimum is not None and (low is None or node.exclusive_minimum >= low):
        low, exclusive = node.exclusive_minimum, True
    if node.maximum is not None and (high is None or node.maximum <= high):
        high = node.maximum
    return Shape(shape.kind, shape.nullable, low, exclusive, high)


def differences(core_contract: dict[str, Any]) -> list[str]:
    """Every way Python's models differ from the core's contract, one line each."""
    found: list[str] = []
    documents = {
        "config": core_contract["config"],
        "result": core_contract["result"],
        **core_contract["answers"],
    }
    models = {**SENT, **READ}
    for name in sorted(set(documents) - set(models)):
        found.append(f"{name}: a document of the core's contract without a Python model")
    for name, model in models.items():
        if name not in documents:
            found.append(f"{name}: the core's contract has no such document")
            continue
        rust_root = Node.model_validate(documents[name])
        python_root = Node.model_validate(model.model_json_schema(mode="validation"))
        rust, python = _Schema(rust_root), _Schema(python_root)
        sent = name in SENT
        found += _compare(name, rust, rust.resolve(rust_root), python, python_root, sent)
    return found + list(_hint_differences(core_contract.get("error_hints", {})))


def _hint_differences(hints: dict[str, str]) -> Iterator[str]:
    """Each error kind's hint: the core's words and its Python class's default, the same."""
    for kind, hint in sorted(hints.items()):
        python = error_class_for_kind(kind).default_hint
        if python != hint:
            yield f"error {kind}: hint {python!r} in Python, {hint!r} in the core"


def _compare(
    where: str, rust: _Schema, rust_node: Node, python: _Schema, python_node: Node, sent: bool
) -> Iterator[str]:
    rust_fields, python_fields = rust_node.properties, python_node.properties
    for field in sorted(set(rust_fields) - set(python_fields)):
        yield f"{where}.{field}: in the core, missing in Python"
    for field in sorted(set(python_fields) - set(rust_fields)):
        yield f"{where}.{field}: in Python, unknown to the core"
    for field in sorted(set(rust_fields) & set(python_fields)):
        place = f"{where}.{field}"
        rust_field, python_field = rust_fields[field], python_fields[field]
        yield from _compare_shapes(place, rust, rust_field, python, python_field, sent)
        if sent:
            yield from _compare_sent(place, field, rust, rust_node, python, python_node)


def _compare_sent(
    place: str, field: str, rust: _Schema, rust_node: Node, python: _Schema, python_node: Node
) -> Iterator[str]:
    """What Python sends must also agree on what is required and on each default."""
    required = field in rust_node.required
    if required != (field in python_node.required):
        yield f"{place}: required in {'the core' if required else 'Python'} only"
    rust_default = rust.resolve(rust_node.properties[field]).default
    python_default = python.resolve(python_node.properties[field]).default
    # schemars leaves out a default it would not serialize (an empty list or map, None).
    unstated = rust_default is None and python_default in (None, [], {})
    if not required and rust_default != python_default and not unstated:
        yield f"{place}: default {python_default!r} in Python, {rust_default!r} in the core"


def _compare_shapes(
    place: str,
    rust: _Schema,
    rust_node: Node | bool,
    python: _Schema,
    python_node: Node | bool,
    sent: bool,
) -> Iterator[str]:
    ours, theirs = python.shape(python_node), rust.shape(rust_node)
    if _ANY in (ours.kind, theirs.kind):
        return
    if {ours.kind, theirs.kind} == {"enum", "string"} and not sent:
        return  # Python reads the core's enumerations as text
    if ours.kind != theirs.kind:
        yield f"{place}: {ours.kind} in Python, {theirs.kind} in the core"
        return
    if ours.nullable != theirs.nullable and (sent or not ours.nullable):
        yield f"{place}: {'nullable' if theirs.nullable else 'never null'} in the core only"
    if ours.enum != theirs.enum:
        yield f"{place}: values {list(ours.enum)} in Python, {list(theirs.enum)} in the core"
    bounds = (ours.low, ours.low_exclusive, ours.high)
    if sent and bounds != (theirs.low, theirs.low_exclusive, theirs.high):
        yield f"{place}: bounds {_bounds(ours)} in Python, {_bounds(theirs)} in the core"
    if ours.item is None or theirs.item is None:
        return
    if ours.kind in ("list", "map"):
        yield from _compare_shapes(f"{place}[]", rust, theirs.item, python, ours.item, sent)
    elif ours.kind == "object":
        yield from _compare(place, rust, theirs.item, python, ours.item, sent)


def _bounds(shape: Shape) -> str:
    low = "-inf" if shape.low is None else f"{shape.low:g}"
    high = "inf" if shape.high is None else f"{shape.high:g}"
    return f"{'(' if shape.low_exclusive else '['}{low}, {high}]"


def main() -> int:
    from dbscale.core.native import load_core

    found = differences(json.loads(load_core().contract()))
    for line in found:
        print(f"contract: {line}", file=sys.stderr)
    if found:
        print(f"error: {len(found)} difference(s) between the core and Python", file=sys.stderr)
        return 1
    print("the core's contract and Python's models agree")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
