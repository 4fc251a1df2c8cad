import sys

from kwdocs.cli import main

sys.exit(main())
