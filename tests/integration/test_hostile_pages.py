"""Every page dbscale draws, from results holding hostile text in every field a person or a
server can put there (target names, point values, labels, verdict and server messages): opened
in Chromium, the text shows as text and nothing in it runs (issue 40)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests.integration.browser import ARTIFACTS, open_page
from tests.integration.conftest import dbscale
from tests.synthetic import make_record, write_results

pytestmark = [pytest.mark.native, pytest.mark.slow]

# Each one would set window.__pwned, open a dialog or add an element if it were markup.
HOSTILE = [
    "<script>window.__pwned='script';alert(1)</script>",
    '"><img src=x onerror="window.__pwned=\'img\'">',
    "'><svg onload=window.__pwned='svg'>",
    "</title></style></script><b id=pwned>bold</b>",
    "javascript:window.__pwned='href'",
]


def _hostile_study(directory: Path, seed: int, tps: float) -> Path:
    rng = random.Random(seed)
    records = []
    for rep in range(4):
        for i, text in enumerate(HOSTILE):
            record = make_record({"tls": text}, tps + i, rng=rng, repetition=rep)
            record["target_name"] = f"t{i}{text}"
            record["workload"] = "tpcb"
            if rep == 3:  # one failed run per point: its message is listed where runs are
                record["verdict"] = {"status": "failed", "message": f"server said {text}"}
            record["observe"] = {"version": 1, "notes": [f"note {text}"]}
            records.append(record)
    return write_results(directory, records)


def _no_script_ran(seen: dict[str, Any], page: str) -> None:
    assert seen["pwned"] is None, f"{page}: {seen['pwned']}"
    assert seen["dialogs"] == [], page
    assert seen["outside"] == [], page
    assert "<script>window.__pwned" in seen["text"], f"{page}: the text is not shown as text"


def test_every_page_shows_hostile_text_as_text(tmp_path: Path, browser: Any) -> None:
    a = _hostile_study(tmp_path / "a", 1, 1000.0)
    b = _hostile_study(tmp_path / "b", 2, 1200.0)
    dbscale("report", str(a)).assert_ok()
    pages = {"report": a / "report.html"}
    dbscale("compare", str(a), str(b), "--html", str(tmp_path / "compare.html")).assert_ok()
    pages["compare"] = tmp_path / "compare.html"
    ranked = dbscale("rank", str(a), str(b), "--metric", "tps", "--by", "target,tls",
                     "--html", str(tmp_path / "rank.html"))  # fmt: skip
    ranked.assert_ok()
    pages["rank"] = tmp_path / "rank.html"
    store = tmp_path / "store"
    for directory, label in ((a, HOSTILE[0]), (b, HOSTILE[1])):
        dbscale("history", "add", str(directory), "--label", f"version={label}",
                "--store", str(store)).assert_ok()  # fmt: skip
    dbscale("history", "show", "--store", str(store), "--html",
            str(tmp_path / "history.html")).assert_ok()  # fmt: skip
    pages["history"] = tmp_path / "history.html"
    for name, page in pages.items():
        html = page.read_text(encoding="utf-8")
        body = html.split('<script type="application/json"')[0]
        assert "<script>window.__pwned" not in body, name  # escaped wherever it is markup
        seen = open_page(browser, page, ARTIFACTS / f"hostile-{name}.png")
        _no_script_ran(seen, name)
        # (Vega warns of empty extents on these synthetic runs; nothing may fail.)
        failed = [m for m in seen["console"] if not m.startswith("warning: ")]
        assert failed == [], (name, failed)
    # The data in the specs is JSON in a script element that cannot be closed from inside.
    specs = (a / "report.html").read_text().split('id="dbscale-specs">')[1].split("</script>")[0]
    assert json.loads(specs)
