"""``python -m gpuconcepts`` runs the command line."""

import sys

from gpuconcepts.cli import entry

sys.exit(entry())
