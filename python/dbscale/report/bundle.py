"""The charting library, bundled for offline use: Vega, Vega-Lite and vega-embed as one script,
from `vl-convert-python` (which also renders PNG/SVG without a browser). Building the bundle
takes seconds, so it is cached per vl-convert and Vega-Lite version.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

from dbscale.errors import InternalError

SCHEMA = "https://vega.github.io/schema/vega-lite/v{major}.json"


def load_vl_convert() -> ModuleType:
    try:
        import vl_convert
    except ImportError as exc:
        raise InternalError(
            f"the charting library is missing ({exc})",
            hint="install dbscale's dependencies: pip install vl-convert-python",
        ) from None
    return vl_convert


def vegalite_version() -> str:
    """The newest Vega-Lite vl-convert ships (e.g. "6.4"): the page and the images use it."""
    versions = load_vl_convert().get_vegalite_versions()
    return str(versions[-1])


def schema_url() -> str:
    return SCHEMA.format(major=vegalite_version().split(".")[0])


def library_versions() -> dict[str, str]:
    vlc = load_vl_convert()
    return {
        "vega": str(vlc.get_vega_version()),
        "vega-lite": vegalite_version(),
        "vega-embed": str(vlc.get_vega_embed_version()),
    }


def javascript_bundle(cache_dir: Path | None) -> str:
    """vega + vega-lite + vega-embed as one script defining `vegaEmbed` globally."""
    vlc = load_vl_convert()
    version = vegalite_version()
    cached = None
    if cache_dir is not None:
        tag = f"{getattr(vlc, '__version__', 'x')}-vl{version}".replace("/", "_")
        cached = cache_dir / f"vega-bundle-{tag}.js"
        try:
            return cached.read_text(encoding="utf-8")
        except OSError:
            pass
    text = str(vlc.javascript_bundle(vl_version=version))
    if cached is not None:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            tmp = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(cached)
        except OSError:
            pass  # a cache that cannot be written only costs time
    return text
