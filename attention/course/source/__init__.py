"""The teacher's sources: each exercise with its solution between `# BEGIN SOLUTION` and `# END SOLUTION`.

Give students the files `attention-grade --release DIR` writes, never these: the release replaces
every solution block with its stub. Each file here is also a working module, so the test suite
grades it as the reference solution.
"""
