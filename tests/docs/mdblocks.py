"""Reading fenced code blocks out of the Markdown pages in docs/, and running them.

Conventions (also described in docs/contributing-docs.md):

- Every ```python block of a page runs, in page order, in one namespace per page.
- A ```output block right after a ```python block (only blank lines between) is that block's
  expected standard output; the test compares them line by line, ignoring trailing spaces.
- `<!-- skip -->` on the line before a fence skips that block. Use it only for code that cannot
  run (it needs a network, or is a deliberately broken fragment); shell commands go in ```bash
  blocks, which never run.
"""

from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)[^`]*$")
SKIP = "<!-- skip -->"


@dataclass
class Block:
    lang: str  # "python", "output", ...
    code: str
    line: int  # 1-based line of the first code line in the page
    skip: bool = False
    expected: str | None = None  # the ```output block that follows, if any


def parse_blocks(text: str) -> list[Block]:
    """The fenced blocks of a Markdown text, with skip marks and expected outputs attached."""
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m["fence"], m["info"].lower()
        prev = next((ln.strip() for ln in reversed(lines[:i]) if ln.strip()), "")
        body, j = [], i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j][len(m["indent"]):] if lines[j].startswith(m["indent"])
                        else lines[j])
            j += 1
        if j == len(lines):
            raise ValueError(f"unclosed code fence opened at line {i + 1}")
        blocks.append(Block(lang, "\n".join(body) + "\n", i + 2, skip=prev == SKIP))
        i = j + 1
    # attach each ```output block to the python block right before it
    attached: list[Block] = []
    for b in blocks:
        if b.lang == "output":
            if not attached or attached[-1].lang != "python" or attached[-1].expected is not None:
                raise ValueError(f"```output block at line {b.line} does not follow a "
                                 "```python block")
            attached[-1].expected = b.code
            continue
        attached.append(b)
    return attached


def _normalise(out: str) -> list[str]:
    lines = [ln.rstrip() for ln in out.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


class BlockFailure(AssertionError):
    pass


def run_page(path: Path, *, update: bool = False) -> list[tuple[Block, str]]:
    """Run every python block of the page at `path` in one namespace.

    Raises BlockFailure naming the page and line on an exception or an output mismatch, unless
    `update` is true: then mismatching outputs are returned as (block, actual output) pairs.
    """
    text = path.read_text(encoding="utf-8")
    namespace: dict = {"__name__": f"docs_{path.stem.replace('-', '_')}"}
    mismatches = []
    for block in parse_blocks(text):
        if block.lang != "python" or block.skip:
            continue
        # leading newlines make traceback line numbers those of the Markdown page
        code = compile("\n" * (block.line - 1) + block.code, str(path), "exec")
        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf):
                exec(code, namespace)
        except Exception as e:
            raise BlockFailure(f"{path}:{block.line}: the code block raised "
                               f"{type(e).__name__}: {e}") from e
        if block.expected is not None and _normalise(buf.getvalue()) != _normalise(
                block.expected):
            if update:
                mismatches.append((block, buf.getvalue()))
                continue
            raise BlockFailure(
                f"{path}:{block.line}: printed output differs from the ```output block below "
                f"it.\n--- expected\n{block.expected}--- actual\n{buf.getvalue()}"
                "(run `python scripts/update_doc_outputs.py` to refresh the page, then review "
                "the diff)")
    return mismatches
