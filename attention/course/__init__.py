r"""A course kit: exercises that have students write backward passes, a grader, and a release command.

- `source/`: the teacher's source of each exercise, its solution between `# BEGIN SOLUTION` and
  `# END SOLUTION` lines (each file also runs as the reference solution).
- `exercises.py`: what each exercise asks, its cases and their points, and its hints in tiers.
- `release.py`: the students' files, each solution block replaced by a stub that raises
  NotImplementedError with hint 1.
- `check.py`: one case checked, with one (yours, true) pair per wrong input, a note when the two
  differ by a constant factor, and errors shown at the student's own file and line.
- `grade.py`: each case under a time limit, the student's code in a child process that sends
  back values only (`channel.py`: the checked messages; `sandbox.py`: the child's limits); the report, Gradescope's
  results.json, and a class's CSV; the `attention-grade` command (also `python -m attention.course`).

The guide for students and teachers is docs/course.md.
"""
