"""kwdocs' shipped templates (installed as the package ``kwdocs.templates``)."""
from pathlib import Path


def folder() -> Path:
    """Where the shipped templates are, in a source checkout or an installed package."""
    return Path(__file__).resolve().parent
