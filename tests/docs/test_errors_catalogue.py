"""docs/errors.md lists every exception class of functrans.errors, each with the built-in class
users catch it by."""

import inspect
import re
from pathlib import Path

from functrans import errors

PAGE = Path(__file__).resolve().parents[2] / "docs" / "errors.md"
CAUGHT_AS = (TypeError, ValueError, RuntimeError, NotImplementedError)


def _classes():
    return {name: cls for name, cls in vars(errors).items()
            if inspect.isclass(cls) and issubclass(cls, errors.FunctransError)}


def test_every_error_class_is_in_the_catalogue_table_with_its_base():
    rows = dict(re.findall(r"^\| `(\w+)` \| `(\w+)` \|", PAGE.read_text(encoding="utf-8"), re.M))
    for name, cls in _classes().items():
        assert name in rows, f"{name} is missing from the table in docs/errors.md"
        base = rows[name]
        assert base in {b.__name__ for b in cls.__mro__}, (name, base)


def test_every_error_class_is_caught_by_a_built_in_class():
    for name, cls in _classes().items():
        if cls is not errors.FunctransError:
            assert issubclass(cls, CAUGHT_AS), name
            assert cls.__doc__, name
