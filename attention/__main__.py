"""`python -m attention [options]`: train the toy transformer (see `python -m attention --help`)."""
import sys

from .trainer import command

if __name__ == "__main__":  # importing the module (as the API reference's generator does) trains nothing
    sys.exit(command())
