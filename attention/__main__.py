"""`python -m attention [options]`: train the toy transformer (see `python -m attention --help`)."""
import sys

from .trainer import command

sys.exit(command())
