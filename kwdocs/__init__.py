"""kwdocs: keep a repository's documentation and keyword index fresh, incrementally."""

__version__ = "0.1.0"
