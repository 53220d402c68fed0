"""The pages' one rendering path: text is escaped wherever it goes, markup is only what the
builder made, and the package holds itself to that (every `trusted` call takes a literal, and
no other module writes tags in f-strings)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from dbscale.report.markup import TAGS, Markup, element, join, text, trusted

REPORT = Path(__file__).resolve().parents[2] / "python" / "dbscale" / "report"
EVIL = "<script>x()</script>\"'&"


def test_text_children_and_attributes_are_escaped() -> None:
    made = element("td", EVIL, class_=EVIL, data_kind="a")
    assert made == (
        '<td class="&lt;script&gt;x()&lt;/script&gt;&quot;&#x27;&amp;" data-kind="a">'
        "&lt;script&gt;x()&lt;/script&gt;&quot;&#x27;&amp;</td>"
    )
    assert isinstance(made, Markup) and element("ul", join([element("li", "a"), "<b>"])) == (
        "<ul><li>a</li>&lt;b&gt;</ul>"
    )
    assert text(trusted("<br>")) == "<br>" and text(None) == ""
    assert element("p", None, "x", Markup()) == "<p>x</p>"


@pytest.mark.parametrize(
    "call",
    [lambda: element("script", "x"), lambda: element("a", "x", onclick="y"),
     lambda: element("a", "x", href="javascript:y()"), lambda: element("p", "x", **{"a b": 1})],
)  # fmt: skip
def test_the_builder_refuses_what_could_run(call: object) -> None:
    with pytest.raises(ValueError):
        call()  # type: ignore[operator]


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(REPORT.glob("*.py"))]


def test_trusted_markup_is_only_ever_a_literal() -> None:
    calls = 0
    for path, module in _modules():
        for node in ast.walk(module):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in (
                "trusted",
                "Markup",
            ):
                calls += 1
                literal = all(isinstance(a, ast.Constant) and isinstance(a.value, str)
                              for a in node.args)  # fmt: skip
                inside = path.name == "markup.py"
                assert literal or inside, f"{path.name}:{node.lineno}: markup from a non-literal"
    assert calls > 0


def test_no_module_writes_tags_in_its_own_strings() -> None:
    """Tags come from `element`; only markup.py and the document's shell (page.py's
    html_document, around the scripts and styles) write them as text."""
    allowed = {("markup.py", "element"), ("page.py", "html_document")}
    names = "|".join(sorted(TAGS | {"script", "style", "html", "head", "body", "title", "img"}))
    tag = re.compile(rf"</?({names})[\s>/]")
    found = []
    for path, module in _modules():
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(module)
            if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        for function in ast.walk(module):
            if not isinstance(function, ast.FunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.JoinedStr):
                    parts = "".join(
                        str(v.value) for v in node.values if isinstance(v, ast.Constant)
                    )
                elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                    parts = "" if id(node) in docstrings else node.value
                else:
                    continue
                if tag.search(parts) and (path.name, function.name) not in allowed:
                    found.append(f"{path.name}:{node.lineno} in {function.name}")
    assert found == []
