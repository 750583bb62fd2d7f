"""``python -m gpuconcepts`` runs the command line."""

import sys

from gpuconcepts.cli import main

sys.exit(main())
