"""docs/from-jax.md: its table of JAX's public names is what scripts/jax_names_table.py makes
from the installed JAX and this checkout (a newer JAX or a new functrans name makes it stale:
the failure names the command that regenerates it), and, without JAX, that every status the
page records holds for this checkout."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("jax_names_table",
                                               ROOT / "scripts" / "jax_names_table.py")
table_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(table_script)

PAGE_TEXT = table_script.PAGE.read_text(encoding="utf-8")
RECORDED_VERSION = re.search(r"Generated from JAX (\S+) by", PAGE_TEXT).group(1)


def test_page_has_one_generated_table_with_every_module():
    assert PAGE_TEXT.count(table_script.BEGIN) == 1 and PAGE_TEXT.count(table_script.END) == 1
    for jax_name, ft_name in table_script.MODULES:
        assert f"| [`{jax_name}`](#{table_script._anchor(jax_name)}) | `{ft_name}` |" in PAGE_TEXT
        assert f"\n### {jax_name}\n" in PAGE_TEXT


def test_recorded_statuses_hold_for_this_checkout():
    # without JAX: every name the page calls present is there (and every missing one is not)
    import importlib
    section = None
    for line in PAGE_TEXT.splitlines():
        if line.startswith("### "):
            section = dict(table_script.MODULES)[line[4:]]
            module = importlib.import_module(section) if importlib.util.find_spec(section) \
                else None
        m = re.fullmatch(r"\| `(\w+)` \| (present|missing) \|", line)
        if m and section:
            have = module is not None and hasattr(module, m.group(1))
            assert have == (m.group(2) == "present"), (
                f"{section}.{m.group(1)} is listed {m.group(2)}: run "
                f"`{table_script.COMMAND}` to regenerate docs/from-jax.md")


def test_table_is_current_with_installed_jax():
    jax = pytest.importorskip("jax")
    fresh = table_script.page_with(PAGE_TEXT, table_script.table())
    assert fresh == PAGE_TEXT, (
        f"docs/from-jax.md is stale (it lists JAX {RECORDED_VERSION}'s names and this "
        f"checkout's; JAX {jax.__version__} is installed): run `{table_script.COMMAND}` and "
        "commit the page")
