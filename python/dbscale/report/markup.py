"""The one way the pages are written: `Markup` is HTML this module made, and nothing else is
ever put into a page unescaped. Text (a target's name, a verdict's message, a label) becomes
markup only by escaping (`text`, or as a child or attribute of `element`); literal markup of the
page's own comes from `trusted`, which `tests/report/test_markup.py` allows only with a string
literal. So a crafted runs.jsonl or a server's message can show as text, never run as script.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from html import escape


class Markup(str):
    """HTML known to be markup (made here); a plain `str` is text and is escaped."""

    __slots__ = ()


# Elements the pages use; any other tag is a mistake in dbscale, refused at once.
TAGS = frozenset({
    "a", "code", "dd", "details", "div", "dl", "dt", "figcaption", "figure", "footer", "h1",
    "h2", "h3", "header", "li", "main", "nav", "p", "section", "span", "strong", "summary",
    "table", "tbody", "td", "th", "thead", "tr", "ul",
})  # fmt: skip
_ATTRIBUTE = re.compile(r"^[a-z][a-z0-9-]*$")
# URL attributes take only what the pages make: anchors, data: URIs, http(s) links.
_SAFE_URL = re.compile(r"^(#|data:|https?://)", re.IGNORECASE)


def trusted(literal: str) -> Markup:
    """The page's own markup, written in dbscale's source as a string literal (the test holds
    every call to that)."""
    return Markup(literal)


def text(value: object) -> Markup:
    """`value` as text: escaped, unless it is markup already."""
    if isinstance(value, Markup):
        return value
    return Markup(escape("" if value is None else str(value), quote=True))


def join(parts: Iterable[object], separator: str = "") -> Markup:
    """The parts, each as text unless it is markup, one after the other."""
    return Markup(text(separator).join(text(p) for p in parts if p is not None))


def element(tag: str, *children: object, **attributes: object) -> Markup:
    """`<tag attributes>children</tag>`: every child is text unless it is markup, every
    attribute value is escaped. `class_` is `class`, `data_kind` is `data-kind`; an attribute
    None or False is left out, True is written bare."""
    if tag not in TAGS:
        raise ValueError(f"<{tag}> is not an element the pages use")
    written = []
    for raw_name, value in attributes.items():
        name = raw_name.rstrip("_").replace("_", "-")
        if not _ATTRIBUTE.match(name) or name.startswith("on"):
            raise ValueError(f"attribute {name!r} is not one the pages write")
        if value is None or value is False:
            continue
        if value is True:
            written.append(f" {name}")
            continue
        shown = str(value)
        if name in ("href", "src") and not _SAFE_URL.match(shown):
            raise ValueError(f"{name}={shown!r}: the pages link only to anchors and data")
        written.append(f' {name}="{escape(shown, quote=True)}"')
    return Markup(f"<{tag}{''.join(written)}>{join(children)}</{tag}>")
