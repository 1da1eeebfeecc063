"""Every ```python block in docs/**/*.md runs, page by page, and printed outputs match the
```output blocks under them: the docs cannot drift from the code."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from mdblocks import BlockFailure, parse_blocks, run_page

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "api" not in p.relative_to(DOCS).parts[:1])


def test_docs_have_pages():
    assert PAGES, f"no Markdown pages found under {DOCS}"


REQUIRES = re.compile(r"<!--\s*requires:\s*([\w., ]+?)\s*-->")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_page_code_blocks_run(page):
    # `<!-- requires: scipy -->` on a page: its blocks need an optional dependency
    for group in REQUIRES.findall(page.read_text(encoding="utf-8")):
        for module in filter(None, (m.strip() for m in group.split(","))):
            pytest.importorskip(module)
    run_page(page)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_page_has_no_stray_fences(page):
    # a block in no language is neither run nor highlighted: say python, output, bash or text
    for block in parse_blocks(page.read_text(encoding="utf-8")):
        assert block.lang, f"{page}:{block.line}: code fence without a language"


# ---- the collector itself ---------------------------------------------------------------

PAGE = textwrap.dedent("""\
    # Title

    ```python
    x = 2
    print(x * 3)
    ```

    ```output
    6
    ```

    ```bash
    pip install functrans
    ```

    <!-- skip -->
    ```python
    raise SystemExit("never runs")
    ```

    ```python
    assert x == 2  # same namespace as the first block
    ```
    """)


def test_parse_blocks_languages_skip_and_outputs():
    blocks = parse_blocks(PAGE)
    assert [(b.lang, b.skip) for b in blocks] == [("python", False), ("bash", False),
                                                 ("python", True), ("python", False)]
    assert blocks[0].expected == "6\n"
    assert blocks[0].line == 4


def test_run_page_passes_and_shares_namespace(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(PAGE)
    run_page(page)


def test_run_page_reports_wrong_output_with_line(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(PAGE.replace("6\n```", "7\n```"))
    with pytest.raises(BlockFailure, match=r"p\.md:4: printed output differs"):
        run_page(page)
    [(block, actual)] = run_page(page, update=True)
    assert actual == "6\n"


def test_run_page_reports_exception_with_markdown_line(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("text\n\n```python\n\n1 / 0\n```\n")
    with pytest.raises(BlockFailure, match=r"p\.md:4: .*ZeroDivisionError") as info:
        run_page(page)
    tb = info.value.__cause__.__traceback__
    while tb.tb_next:
        tb = tb.tb_next
    assert tb.tb_lineno == 5  # the line of `1 / 0` in the page


def test_output_block_must_follow_python():
    with pytest.raises(ValueError, match="does not follow"):
        parse_blocks("```bash\nls\n```\n```output\nx\n```\n")
