"""The README's example prints what the README says it prints."""

import contextlib
import io
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_readme_example_output_is_current():
    text = README.read_text()
    blocks = re.findall(r"```(\w*)\n(.*?)```", text, re.S)
    code = next(b for lang, b in blocks if lang == "python" and "make_jaxpr" in b
                and "print" in b)
    expected = blocks[[b for _, b in blocks].index(code) + 1][1]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {})
    assert out.getvalue() == expected


def test_quickstart_commands_are_the_ci_test_command():
    text = README.read_text()
    ci = (README.parent / ".ci" / "run").read_text()
    assert 'python -m pip install -e ".[test]" && python -m pytest -q' in text
    assert "python -m pytest -q" in ci


def test_readme_torch_example_prints_what_its_comment_says():
    text = README.read_text()
    code = next(b for lang, b in re.findall(r"```(\w*)\n(.*?)```", text, re.S)
                if lang == "python" and "functrans.torch" in b)
    expected = re.search(r"print\(.*\)\s*#\s*(.*)\n", code).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {})
    assert out.getvalue().strip() == expected.strip()


def test_readme_flagship_demo_is_an_example_with_a_quick_mode():
    text = README.read_text()
    demo = re.search(r"python (examples/\S+\.py) --quick", text).group(1)
    assert (README.parent / demo).exists()
