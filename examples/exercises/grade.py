"""The grader moved into the package: `attention-grade` (or `python -m attention.course`); this runs it."""
import sys

from attention.course.grade import main

if __name__ == "__main__":
    sys.exit(main())
