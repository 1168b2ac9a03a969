"""An HTML template for `dvc plots show` with Vega, Vega-Lite and vega-embed inlined, so plots render offline.

DVC's stock page (dvc-render's `PAGE_HTML`) fills its `{scripts}` placeholder with `<script src=...>` tags that
load the three libraries from a CDN; without internet every chart is blank. This template leaves `{scripts}` out
and instead carries one inline `<script>` built by vl-convert-python's `javascript_bundle()` (vega-embed with
Vega and Vega-Lite compiled in). Each chart div that dvc-render writes into `{plot_divs}` runs
`var spec = {...}; vegaEmbed('#id', spec);` in a plain inline script, so the bundle is a classic (not module)
script in `<head>`, before the divs, and the one global it defines is `vegaEmbed`. The bundle is ES-module code
with hundreds of top-level names (`n`, `t`, ...); it runs inside a strict-mode function so none of them leaks into
the page, where a global `const` would clash with a `var` of the same name in a chart's script.

The page is about 1 MB, so it is generated, not committed:

    python -m frozenbridge.tools.plots_template            # writes .dvc/plots/offline.html

and `.dvc/config` points at it with `plots.html_template = plots/offline.html` (DVC resolves a relative value
against the `.dvc/` directory, not the repo root). A missing file makes `dvc plots show` fail with
"HTML template has to contain '{plot_divs}'", because dvc-render then takes the path string as the template.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from frozenbridge.core.atomic import atomic_path

DEFAULT_PATH = Path(".dvc/plots/offline.html")

# dvc-render's HTML.embed() str.replace()s these anywhere in the page; PAGE keeps {plot_divs} (required) and
# {refresh_tag}, and deliberately has no {scripts} (dvc-render fills that with the CDN <script src=...> tags).
_DVC_PLACEHOLDERS = ("{plot_divs}", "{scripts}", "{refresh_tag}")

PAGE = """<!DOCTYPE html>
<html>
<head>
    <meta charset="utf-8">
    {refresh_tag}
    <title>DVC Plot</title>
    <!-- {banner} -->
    <script type="text/javascript">
(function () {
"use strict";
{bundle}
}).call(undefined);
    </script>
    <style>
        table {
            border-spacing: 15px;
        }
        /* dvc-render puts each image in a no-wrap box at its natural size: keep figures inside the page */
        img {
            max-width: calc(100vw - 48px);
            height: auto;
        }
        div[style*="nowrap"] {
            white-space: normal !important;
        }
    </style>
</head>
<body>
    {plot_divs}
</body>
</html>
"""


def _vegalite_version() -> str | None:
    """The newest Vega-Lite that vl-convert bundles with the major version of DVC's plot templates' `$schema`.

    DVC's built-in templates declare Vega-Lite v5, so their specs are compiled by the Vega-Lite they were written
    for. (vl-convert pairs every Vega-Lite with Vega 6, so vega-embed still logs one harmless console warning per
    chart, "The compiled spec uses Vega v5, but current version is v6...".)
    Returns None (vl-convert's default, its newest) when the major version can't be matched.
    """
    import vl_convert
    from dvc_render.vega_templates import LinearTemplate

    m = re.search(r"/v(\d+)(?:\.\d+)*\.json$", str(LinearTemplate.DEFAULT_CONTENT.get("$schema", "")))
    if not m:
        return None
    same_major = [v for v in vl_convert.get_vegalite_versions() if v.split(".")[0] == m.group(1)]
    return max(same_major, key=lambda v: tuple(int(p) for p in v.split("."))) if same_major else None


# vl-convert's default snippet also sets window.vega and window.vegaLite, but with vega 6 (ES-module only, no default
# export) its bundler resolves both to null; vegaEmbed carries its own copies, and it is all DVC's charts call.
# Charts render as SVG rather than canvas: sharp at any zoom, and every mark is an element a test can read.
SNIPPET = ("window.vegaEmbed = function (el, spec, opts) {"
           " return vegaEmbed(el, spec, Object.assign({renderer: 'svg'}, opts || {})); };")


def _script_safe(js: str) -> str:
    """Keep bundled JavaScript from closing or confusing the inline <script> element it is pasted into."""
    # Both sequences can only occur inside string, regex or template literals, where the escaped form is equivalent.
    js = re.sub(r"</(script)", r"<\\/\1", js, flags=re.IGNORECASE)
    return js.replace("<!--", "<\\!--")


def render_template(vl_version: str | None = None) -> str:
    """Return the template text: DVC's `{plot_divs}` and `{refresh_tag}` placeholders plus the inlined bundle."""
    import vl_convert

    vl_version = vl_version or _vegalite_version()
    bundle = _script_safe(vl_convert.javascript_bundle(SNIPPET, vl_version=vl_version))
    clash = [p for p in _DVC_PLACEHOLDERS if p in bundle]
    if clash:  # dvc-render would substitute into the JavaScript itself
        raise ValueError(f"the vl-convert bundle contains DVC placeholder text {clash}; cannot inline it safely")
    banner = (f"frozenbridge offline plots template (python -m frozenbridge.tools.plots_template): "
              f"vl-convert {vl_convert.__version__}, vega {vl_convert.get_vega_version()}, "
              f"vega-lite {vl_version or 'latest'}, vega-embed {vl_convert.get_vega_embed_version()}")
    # Fill our own fields with replace, not str.format: the bundle is full of braces and DVC's placeholders must stay;
    # the bundle goes in last so nothing is substituted inside it.
    return PAGE.replace("{banner}", banner).replace("{bundle}", bundle)


def build_template(path: str | Path = DEFAULT_PATH, vl_version: str | None = None) -> Path:
    """Write the offline template to `path` atomically (temp file, then os.replace) and return the path."""
    path = Path(path)
    text = render_template(vl_version)
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m frozenbridge.tools.plots_template",
        description="Write an HTML template for `dvc plots show` with Vega, Vega-Lite and vega-embed inlined "
                    "(from vl-convert-python), so the plots render without internet. Point DVC at it with "
                    "`dvc config plots.html_template plots/offline.html` (relative to .dvc/).",
    )
    parser.add_argument("path", nargs="?", default=str(DEFAULT_PATH),
                        help=f"where to write the template (default: {DEFAULT_PATH}, relative to the current "
                             "directory)")
    parser.add_argument("--vl-version", default=None,
                        help="Vega-Lite version to bundle, e.g. 5.21 (default: the newest one vl-convert has with "
                             "the major version of DVC's plot templates)")
    args = parser.parse_args(argv)
    out = build_template(args.path, args.vl_version)
    print(f"plots template: {out} ({out.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
