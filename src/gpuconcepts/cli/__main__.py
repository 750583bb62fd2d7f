"""``python -m gpuconcepts.cli`` runs the command line, as ``python -m gpuconcepts`` does."""

import sys

from gpuconcepts.cli import entry

sys.exit(entry())
