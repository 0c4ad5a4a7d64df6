"""`python -m attention.course ...`: the grader's command line (see `python -m attention.course --help`)."""
import sys

from .grade import main

sys.exit(main())
