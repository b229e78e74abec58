"""``python -m rwpost`` runs the command line."""

import sys

from rwpost.cli import main

sys.exit(main())
