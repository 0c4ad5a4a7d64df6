"""Build the documentation site the way CI does: mkdocs build --strict, into a temporary folder.

    pip install -e '.[docs]'
    python scripts/build_docs.py               # the site is thrown away: this checks it builds
    python scripts/build_docs.py --out site/   # keep it (open site/index.html)

Exit status 0 when the site builds with no warning; otherwise mkdocs' messages and status 1.
Strict mode turns every warning into a failure: a broken link or anchor between pages, a
docs/*.md page missing from the nav, a docstring mkdocstrings cannot read.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build(out):
    """Run `mkdocs build --strict` on the repository's mkdocs.yml; return the CompletedProcess."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")  # material's banner, printed on every build
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", out],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Build the documentation site with mkdocs --strict.")
    ap.add_argument("--out", help="keep the site in this folder (default: a temporary one, deleted)")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.abspath(args.out) if args.out else os.path.join(tmp, "site")
        done = build(out)
    sys.stderr.write(done.stdout + done.stderr if done.returncode else "")
    where = out if args.out else "a temporary folder"
    verdict = "built" if done.returncode == 0 else "FAILED"
    print(f"docs: site {verdict} with mkdocs --strict in {time.perf_counter() - start:.0f} s ({where})")
    return 0 if done.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
