"""A Python package's API on its pages (issue 32): module variables and type aliases as
definitions that names link to, ``__all__`` as the Public API, enum members and dataclass
fields under their class, keyword pages naming a member with its class."""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

from tests.conftest import run_kwdocs

TYPES = '''\
"""Type aliases."""
from typing import Optional, TypeAlias, Union

try:
    import brotli
except ImportError:
    brotli = None

AuthTypes = Union[tuple[str, str], None]
"""What ``auth=`` accepts."""
Timeout: TypeAlias = Optional[float]
DEFAULT_RETRIES: int = 3
logger = make_logger("pkg")
_cache = {}
__version__ = "1.0"
'''

CLIENT = '''\
"""The client."""
from ._types import AuthTypes


def send(auth: AuthTypes) -> None:
    """Send with ``AuthTypes``."""
'''


def _build(tmp_path: Path, files: dict[str, str]) -> Path:
    src = tmp_path / "src"
    for name, text in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(textwrap.dedent(text), encoding="utf-8")
    out = tmp_path / "out"
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    return out


def _entry(page: str, name: str) -> str:
    """The Code Structure line of ``name``."""
    match = re.search(rf"^[ ]*- <a id=\"[^\"]+\"></a>[\w ]+ \*\*`{re.escape(name)}`\*\*.*$", page, re.MULTILINE)
    assert match, f"{name} is not listed"
    return match.group(0)


def test_module_variables_and_type_aliases_are_definitions_names_link_to(tmp_path):
    out = _build(tmp_path, {"pkg/__init__.py": "", "pkg/_types.py": TYPES, "pkg/_client.py": CLIENT})
    page = (out / "pkg/_types.py_docs.md").read_text(encoding="utf-8")
    assert _entry(page, "AuthTypes").startswith('- <a id="l9-type-authtypes"></a>type **`AuthTypes`** '
                                                 "`= Union[tuple[str, str], None]` ([line 9](../../src/pkg/_types.py#L9))")
    assert "What `auth=` accepts." in page.split("**`AuthTypes`**")[1].split("- <a id=")[0]
    assert "type **`Timeout`** `= Optional[float]`" in _entry(page, "Timeout")
    assert "constant **`DEFAULT_RETRIES`** `: int`" in _entry(page, "DEFAULT_RETRIES")
    assert "variable **`logger`** `= make_logger('pkg')` ([line 13](../../src/pkg/_types.py#L13))" in _entry(page, "logger")
    assert "variable **`__version__`**" in _entry(page, "__version__")
    # a private variable is left out (as pdoc does), and so is an import's fallback
    assert "**`_cache`**" not in page and "variable **`brotli`**" not in page
    client = (out / "pkg/_client.py_docs.md").read_text(encoding="utf-8")
    assert "_types.py_docs.md#l9-type-authtypes" in client


def test_all_is_the_public_api_each_name_linked_to_where_it_is_defined(tmp_path):
    out = _build(tmp_path, {
        "pkg/__init__.py": '''\
            """The package."""
            from ._client import *
            from ._types import AuthTypes as AuthTypes

            __all__ = ["Client", "AuthTypes", "helper"]
            __all__ += ["missing"]


            def helper():
                """Helps."""
            ''',
        "pkg/_client.py": '__all__ = ["Client"]\n\n\nclass Client:\n    """A client."""\n',
        "pkg/_types.py": TYPES,
    })
    page = (out / "pkg/__init__.py_docs.md").read_text(encoding="utf-8")
    api = page.split("### Public API\n\n")[1].split("\n\n###")[0]
    assert api.splitlines() == [
        "- [`pkg.Client`](./_client.py_docs.md#l4-class-client): defined in `pkg._client`",
        "- [`pkg.AuthTypes`](./_types.py_docs.md#l9-type-authtypes): defined in `pkg._types`",
        "- [`pkg.helper`](#l9-function-helper): defined here",
        "- `pkg.missing`: not defined in this file",
    ]
    purpose = page.split("## File Purpose\n\n")[1].split("\n")[0]
    assert purpose.startswith("The package. Exports `Client`, `AuthTypes`, `helper` and 1 more name (`__all__`).")
    client = (out / "pkg/_client.py_docs.md").read_text(encoding="utf-8")
    assert "- [`pkg._client.Client`](#l4-class-client): defined here" in client
    # a module without ``__all__`` has no such list
    assert "Public API" not in (out / "pkg/_types.py_docs.md").read_text(encoding="utf-8")


def test_enum_members_and_dataclass_and_namedtuple_fields_are_members_of_their_class(tmp_path):
    out = _build(tmp_path, {"pkg/__init__.py": "", "pkg/models.py": '''\
        import enum
        from dataclasses import dataclass, field
        from typing import ClassVar, NamedTuple


        class Color(enum.IntEnum):
            RED = 1
            """The colour of stop."""
            GREEN = 2
            _ignore_ = []


        @dataclass(frozen=True)
        class Point:
            x: int
            y: int = 0
            tags: list[str] = field(default_factory=list)
            count: ClassVar[int] = 0


        class Pair(NamedTuple):
            left: str
            right: str = ""


        class Plain:
            size: int = 3
        '''})
    page = (out / "pkg/models.py_docs.md").read_text(encoding="utf-8")
    assert '  - <a id="l7-constant-red"></a>enum constant **`RED`** `= 1` ([line 7](../../src/pkg/models.py#L7))' in page
    assert "    The colour of stop." in page
    assert "enum constant **`GREEN`** `= 2` ([line 9](../../src/pkg/models.py#L9))" in page and "`_ignore_`" not in page
    assert '  - <a id="l15-variable-x"></a>field **`x`** `: int` ([line 15](../../src/pkg/models.py#L15))' in page
    assert "field **`y`** `: int = 0`" in page
    assert "field **`tags`** `: list[str] = field(default_factory=list)`" in page
    assert "**`count`**" not in page      # a ClassVar is no field
    assert "field **`left`** `: str`" in page and "field **`right`** `: str = ''`" in page
    # a plain class's variable is no field: an attribute, as pdoc lists it
    assert "field **`size`**" not in page and "attribute **`size`** `: int = 3`" in page


def test_keyword_page_names_each_member_with_its_class_and_lists_module_variables(tmp_path):
    out = _build(tmp_path, {"pkg/__init__.py": "", "pkg/decoders.py": '''\
        timeout = 5.0


        class GZipDecoder:
            def decode(self, data):
                def inner():
                    pass


        class TextDecoder:
            def decode(self, data):
                pass
        '''})
    page = (out / "pkg/decoders.py_kw.md").read_text(encoding="utf-8")
    assert "- **`GZipDecoder.decode`**: [method, line 5](./decoders.py_docs.md#l5-method-decode)" in page
    assert "- **`TextDecoder.decode`**: [method, line 11](./decoders.py_docs.md#l11-method-decode)" in page
    assert "**`decode`**:" not in page.split("## Keyword → Section Map")[0]
    # a local definition keeps its name and says where it is local to
    assert "- **`inner`** (in `GZipDecoder.decode.<locals>`)" in page
    assert "- **`timeout`**: [variable, line 1](./decoders.py_docs.md#l1-variable-timeout)" in page


def test_inherited_members_are_listed_with_the_base_they_come_from(tmp_path):
    out = _build(tmp_path, {"pkg/__init__.py": "", "pkg/client.py": '''\
        from typing import Generic, TypeVar

        T = TypeVar("T")


        class Root:
            def close(self):
                pass


        class BaseClient(Root, Generic[T]):
            @property
            def headers(self):
                pass

            @headers.setter
            def headers(self, value):
                pass

            def send(self):
                pass

            def _private(self):
                pass


        class Client(BaseClient[str], metaclass=type):
            def send(self):
                pass
        '''})
    page = (out / "pkg/client.py_docs.md").read_text(encoding="utf-8")
    client = next(line for line in page.splitlines() if "class **`Client`**" in line)
    assert client.endswith(
        "; inherits from [`BaseClient`](#l11-class-baseclient): [`headers`](#l13-method-headers)"
        "; inherits from [`Root`](#l6-class-root): [`close`](#l7-method-close)")
    base = next(line for line in page.splitlines() if "class **`BaseClient`**" in line)
    assert base.endswith("; inherits from [`Root`](#l6-class-root): [`close`](#l7-method-close)")
    assert "inherits" not in next(line for line in page.splitlines() if "class **`Root`**" in line)
    # a property is labelled so, its setter is the method it is
    assert '  - <a id="l13-method-headers"></a>property **`headers`** `(self)` ([line 13](../../src/pkg/client.py#L13-' in page
    assert '  - <a id="l17-method-headers"></a>method **`headers`** `(self, value)` ([line 17](../../src/pkg/client.py#L17-' in page


def test_keyword_page_lists_the_module_path_of_a_relative_import_as_written(tmp_path):
    out = _build(tmp_path, {"pkg/__init__.py": '''\
        from .checkpoint_activation import checkpoint
        from ..outside import thing
        from . import sibling
        ''', "pkg/checkpoint_activation.py": "def checkpoint():\n    pass\n"})
    page = (out / "pkg/__init__.py_kw.md").read_text(encoding="utf-8")
    imports = page.split("### Imports")[1].split("\n## ")[0]
    assert "- **`.checkpoint_activation`**: [import, line 1](./__init__.py_docs.md#l1-import-.checkpoint_activation)" \
        in imports, imports
    assert "- **`..outside`**: [import, line 2]" in imports
    assert "**`.`**" not in imports   # ``from . import x`` names no module
