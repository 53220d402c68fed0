"""A plan document and where each of its values came from: a YAML file (file, line, column, kept
from the composed node tree), a bundled recipe, or the command line (`--set`, flags). Every error
about the plan names that origin, so `plan.yaml:12:5: matrix.clientz: ...` points at the line.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dbscale.errors import PlanError

PathKey = tuple[str | int, ...]


@dataclass(frozen=True)
class PlanLocator:
    """Where each value of a plan came from, and nothing else: what the checks after
    validation need to name a value's flag or file line. They read the validated plan itself;
    the document stays with the steps before validation."""

    source: str  # what the document came from, for messages
    origins: Mapping[PathKey, str]
    command: str = "run"  # the dbscale command whose flags filled it, for hints
    sections: frozenset[str] = frozenset()  # the document's top-level keys, as written

    def where(self, path: PathKey) -> str:
        """The origin of `path` (or of its nearest ancestor that has one)."""
        for end in range(len(path), -1, -1):
            origin = self.origins.get(tuple(path[:end]))
            if origin is not None:
                return origin
        return self.source

    def error(self, path: PathKey, message: str, hint: str | None = None) -> PlanError:
        """`origin: path: message`; a value a flag gave is named by the flag alone."""
        origin = self.where(path)
        flag = re.fullmatch(r"command line \((--[a-z-]+)\)", origin)
        if flag is not None:
            return PlanError(
                f"{flag.group(1)}: {message}",
                hint or f"`dbscale {self.command} --help` describes {flag.group(1)}",
            )
        return PlanError(f"{origin}: {format_path(path)}: {message}", hint)


@dataclass
class PlanDocument:
    """The plan as plain data, plus the origin of every value in it."""

    data: dict[str, Any]
    source: str  # what the document came from, for messages
    origins: dict[PathKey, str] = field(default_factory=dict)
    command: str = "run"  # the dbscale command whose flags filled it, for hints

    def locator(self) -> PlanLocator:
        """The origins as they are now (a copy), for the checks after validation."""
        return PlanLocator(self.source, dict(self.origins), self.command, frozenset(self.data))

    def where(self, path: PathKey) -> str:
        return PlanLocator(self.source, self.origins, self.command).where(path)

    def error(self, path: PathKey, message: str, hint: str | None = None) -> PlanError:
        return PlanLocator(self.source, self.origins, self.command).error(path, message, hint)

    def get(self, path: PathKey, default: Any = None) -> Any:
        node: Any = self.data
        for part in path:
            if not _has_child(node, part):
                return default
            node = node[part]
        return node

    def set(self, path: PathKey, value: Any, origin: str) -> None:
        """Sets `path` (creating mappings on the way) and records `origin` for it and below."""
        node: Any = self.data
        for depth, part in enumerate(path):
            last = depth == len(path) - 1
            if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
                if last:
                    node[part] = value
                    break
                child = node[part]
            elif isinstance(node, dict):
                if last:
                    node[part] = value
                    break
                child = node.get(part)
                if not isinstance(child, dict | list):
                    child = node[part] = {}
            else:
                raise self.error(path[: depth + 1], "cannot be set: its parent is not a mapping")
            node = child
        for known in [p for p in self.origins if p[: len(path)] == path]:
            del self.origins[known]
        self.origins[path] = origin

    def delete(self, path: PathKey) -> None:
        parent = self.get(path[:-1])
        if isinstance(parent, dict):
            parent.pop(path[-1], None)

    def copy(self) -> PlanDocument:
        return PlanDocument(copy.deepcopy(self.data), self.source, dict(self.origins), self.command)


def _has_child(node: Any, part: str | int) -> bool:
    if isinstance(node, Mapping):
        return part in node
    return isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)


def format_path(path: PathKey) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "plan"


MAX_PLAN_BYTES = 1 << 20  # a plan is a page of YAML; a megabyte is a mistake or an attack
# Lists and mappings within each other: a real plan nests 5 deep; the YAML composer and what
# reads its result recurse once per level, so a hostile depth must stop before them.
MAX_PLAN_DEPTH = 32


def _flow_depth_past_bound(text: str) -> int | None:
    """Where flow collections (`[`, `{`) first nest past MAX_PLAN_DEPTH, as an index into
    `text` (quoted text and comments skipped), or None. A scan of the characters: YAML's own
    parser slows to a crawl on deep flow nesting, so this runs before it."""
    depth, quote, comment = 0, "", False
    previous = "\n"
    for i, c in enumerate(text):
        if comment:
            comment = c != "\n"
        elif quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "#" and previous in " \t\n":
            comment = True
        elif c in "[{":
            depth += 1
            if depth > MAX_PLAN_DEPTH:
                return i
        elif c in "]}":
            depth = max(depth - 1, 0)
        previous = c
    return None


def _check_events(text: str, source: str) -> None:
    """What the YAML parser's flat event stream shows before anything is built from it:
    nesting deeper than MAX_PLAN_DEPTH is refused, and so are anchors and aliases (a few hundred
    bytes of nested aliases expand to gigabytes, a "billion laughs", and a plan has no need of
    them)."""
    deep = _flow_depth_past_bound(text)
    if deep is not None:
        line = text.count("\n", 0, deep) + 1
        column = deep - (text.rfind("\n", 0, deep) + 1) + 1
        raise PlanError(
            f"{source}:{line}:{column}: lists and mappings nested over {MAX_PLAN_DEPTH} deep",
            "a plan nests a few levels (docs/plans.md); is this file a plan?",
        )
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            mark = event.start_mark
            where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
            if isinstance(event, yaml.AliasEvent):
                raise PlanError(
                    f"{where}: YAML aliases (*{event.anchor}) are not allowed in a plan",
                    "write the values out; a matrix or a zip group says what varies",
                )
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_PLAN_DEPTH:
                    raise PlanError(
                        f"{where}: lists and mappings nested over {MAX_PLAN_DEPTH} deep",
                        "a plan nests a few levels (docs/plans.md); is this file a plan?",
                    )
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return  # the composer below reports the syntax error with its line


def load_plan_text(text: str, source: str) -> PlanDocument:
    """Parses YAML `text`; `source` names it in messages (a path, or `recipe NAME`)."""
    if len(text) > MAX_PLAN_BYTES:
        raise PlanError(
            f"{source}: the plan is {len(text):,} characters, over the {MAX_PLAN_BYTES:,} a plan "
            "may have",
            "a plan is a short YAML file (docs/plans.md); a matrix lists values, not points",
        )
    _check_events(text, source)
    try:
        loader = yaml.SafeLoader(text)  # refuses control characters at once (ReaderError)
    except yaml.YAMLError as exc:
        raise PlanError(f"{source}: not YAML text ({exc})", "a plan is a YAML text file") from None
    try:
        node = loader.get_single_node()
        if node is None:
            raise PlanError(f"{source}: the plan is empty", _HINT_EMPTY)
        origins: dict[PathKey, str] = {}
        data = _construct(loader, node, (), origins, source)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        problem = exc.problem or exc.context or "invalid YAML"
        raise PlanError(f"{where}: {problem}", "fix the YAML syntax at that line") from None
    except yaml.YAMLError as exc:
        raise PlanError(f"{source}: not valid YAML ({exc})", "fix the YAML syntax") from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        raise PlanError(f"{origins.get((), source)}: a plan must be a mapping of keys", _HINT_EMPTY)
    return PlanDocument(data, source, origins)


def load_plan_file(path: Path) -> PlanDocument:
    hint = "give the path of a YAML plan, or a workload name (`dbscale workloads`)"
    try:
        if path.stat().st_size > MAX_PLAN_BYTES:
            raise PlanError(
                f"{path}: the plan is {path.stat().st_size:,} bytes, over the "
                f"{MAX_PLAN_BYTES:,} a plan may have", hint,
            )  # fmt: skip
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise PlanError(f"cannot read plan {path}: {exc.strerror or exc}", hint) from None
    except UnicodeDecodeError as exc:
        raise PlanError(f"{path}: not a text file (byte {exc.start} is not UTF-8)", hint) from None
    if "\x00" in text:
        raise PlanError(f"{path}: not a text file (it holds NUL bytes)", hint)
    return load_plan_text(text, str(path))


_HINT_EMPTY = (
    "a plan is a YAML mapping: workload, targets, load, matrix, repeat, ... (docs/plans.md)"
)


def _mark(source: str, node: yaml.Node) -> str:
    return f"{source}:{node.start_mark.line + 1}:{node.start_mark.column + 1}"


def _construct(
    loader: yaml.SafeLoader,
    node: yaml.Node,
    path: PathKey,
    origins: dict[PathKey, str],
    source: str,
) -> Any:
    origins.setdefault(path, _mark(source, node))
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | float | bool):
                raise PlanError(f"{_mark(source, key_node)}: a key must be a plain word", None)
            name = str(key)
            if name in result:
                raise PlanError(
                    f"{_mark(source, key_node)}: {format_path((*path, name))}: duplicate key",
                    "each key may appear once in a mapping",
                )
            origins[(*path, name)] = _mark(source, key_node)
            result[name] = _construct(loader, value_node, (*path, name), origins, source)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [
            _construct(loader, item, (*path, i), origins, source)
            for i, item in enumerate(node.value)
        ]
    return loader.construct_object(node, deep=True)


def parse_cli_value(text: str) -> Any:
    """A `--set` value read as YAML (`3`, `30s`, `[1, 2]`, `on`), or the text itself."""
    _check_events(text, "--set value")
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def split_set_path(key: str) -> PathKey:
    """`load.duration` -> ("load", "duration"); `targets.0.url` -> ("targets", 0, "url")."""
    parts: list[str | int] = []
    for part in key.split("."):
        parts.append(int(part) if part.isdigit() else part)
    return tuple(parts)


def item_name(item: Any) -> Any:
    """The name of a named list item (`targets: [{name: main, url: ...}]`), or None."""
    return item["name"] if isinstance(item, dict) and "name" in item else None
