"""One module per ``kwdocs`` subcommand; ``kwdocs.cli`` wires them to the command line."""
