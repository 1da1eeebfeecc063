"""Regenerate the table of JAX's public names in docs/from-jax.md from the installed modules.

    python scripts/jax_names_table.py           # rewrites the generated part of the page
    python scripts/jax_names_table.py --check   # exits 1 if the page is stale, writes nothing

For each JAX module below, every public name (dir() without a leading underscore) is looked up
on the functrans module that stands for it: present or missing. Needs jax installed; the
table records the JAX version it was made from (tests/docs/test_from_jax.py compares the page
with a fresh table whenever that version is installed).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "from-jax.md"
BEGIN = "<!-- BEGIN GENERATED: python scripts/jax_names_table.py -->"
END = "<!-- END GENERATED -->"
COMMAND = "python scripts/jax_names_table.py"
sys.path.insert(0, str(ROOT))   # this checkout's functrans, not an installed one

# JAX module -> the functrans module that stands for it
MODULES = [
    ("jax", "functrans"),
    ("jax.numpy", "functrans.numpy"),
    ("jax.numpy.linalg", "functrans.numpy.linalg"),
    ("jax.numpy.fft", "functrans.numpy.fft"),
    ("jax.nn", "functrans.nn"),
    ("jax.nn.initializers", "functrans.nn.initializers"),
    ("jax.random", "functrans.random"),
    ("jax.lax", "functrans.lax"),
    ("jax.scipy", "functrans.scipy"),
    ("jax.scipy.linalg", "functrans.scipy.linalg"),
    ("jax.scipy.special", "functrans.scipy.special"),
    ("jax.scipy.stats", "functrans.scipy.stats"),
]


def _import(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def public_names(module) -> list[str]:
    return sorted(n for n in dir(module) if not n.startswith("_"))


def statuses() -> list[tuple[str, str, list[tuple[str, bool]]]]:
    """(jax module, functrans module, [(name, present)]) for each module of MODULES that the
    installed JAX has."""
    out = []
    for jax_name, ft_name in MODULES:
        jax_module = _import(jax_name)
        if jax_module is None:
            continue
        ft_module = _import(ft_name)
        rows = [(n, ft_module is not None and hasattr(ft_module, n))
                for n in public_names(jax_module)]
        out.append((jax_name, ft_name, rows))
    return out


def table() -> str:
    """The generated Markdown: a summary, then one table per module."""
    import jax
    found = statuses()
    lines = [BEGIN, "",
             f"Generated from JAX {jax.__version__} by `{COMMAND}`; do not edit by hand.", "",
             "| JAX module | functrans module | present | missing |", "| --- | --- | --- | --- |"]
    for jax_name, ft_name, rows in found:
        have = sum(p for _, p in rows)
        lines.append(f"| [`{jax_name}`](#{_anchor(jax_name)}) | `{ft_name}` | {have} | "
                     f"{len(rows) - have} |")
    for jax_name, ft_name, rows in found:
        lines += ["", f"### {jax_name}", "", "| name | status |", "| --- | --- |"]
        lines += [f"| `{n}` | {'present' if p else 'missing'} |" for n, p in rows]
    lines += ["", END]
    return "\n".join(lines) + "\n"


def _anchor(heading: str) -> str:
    """The anchor Markdown renderers give a `### heading` (lower case, dots dropped)."""
    return heading.lower().replace(".", "")


def page_with(text: str, generated: str) -> str:
    """`text` with the part between the markers replaced by `generated`."""
    start, end = text.index(BEGIN), text.index(END) + len(END) + 1
    return text[:start] + generated + text[end:]


def main(argv: list[str]) -> int:
    text = PAGE.read_text(encoding="utf-8")
    fresh = page_with(text, table())
    if "--check" in argv:
        if fresh != text:
            print(f"{PAGE.relative_to(ROOT)} is stale: run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    if fresh != text:
        PAGE.write_text(fresh, encoding="utf-8")
        print(f"rewrote {PAGE.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
