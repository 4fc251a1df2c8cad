from kwdocs.cli import entry

entry()
