"""`python -m attention.course ...`: the grader's command line (see `python -m attention.course --help`)."""
import sys

from .grade import main

if __name__ == "__main__":
    sys.exit(main())
