"""mkdocs hooks: pages whose source lives outside docs/, and links between repository files.

- README.md is the site's home page (index.md), so it is written once, for GitHub and the site.
- Notebooks (jupytext percent files, notebooks/*.py) become pages under notebooks/ when the
  mkdocs-jupyter plugin is enabled in mkdocs.yml, and a "Notebooks" section is added to the nav
  for them: enabling the plugin is the only change they need.
- Fences keep only the options superfences knows (`title`); the project's own, such as the
  `check=` of docs/backprop_through_attention.md, are for its tests.
- Links are written for GitHub, relative to the file that holds them. On the site, a link to
  another page is rewritten to that page (README's `docs/attention.md` is `attention.md` there);
  a link to a repository file that is not a page (`examples/exercises/README.md`) keeps its text
  and loses the link, since the site has no copy of it; a link to nothing is left alone, so that
  mkdocs --strict reports it and the build fails.
"""
import glob
import logging
import os
import posixpath
import re
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docmath  # noqa: E402  (beside this file, which mkdocs loads by path)
import run_notebooks  # noqa: E402

sys.path.pop(0)

try:
    import mkdocs.plugins
    from mkdocs.structure.files import File
    event_priority = mkdocs.plugins.event_priority
except ImportError:  # the tests use rewrite_links alone, where mkdocs (the docs extra) is not installed
    def event_priority(priority):
        return lambda fn: fn

PAGES_OUTSIDE_DOCS = {"README.md": "index.md"}  # repository path -> page path on the site
NOTEBOOKS = ("notebooks/[0-9]*.py", "notebooks/exercises/[0-9]*.py")  # numbered: the generator script is not one
LINK = re.compile(r"(?<!!)\[(?P<text>[^\]\n]+)\]\((?P<target>[^)\s#]+)(?P<anchor>#[^)\s]*)?\)")


def _root(config):
    return os.path.dirname(os.path.abspath(config.config_file_path))


def _jupyter_enabled(config):
    return any(name.endswith("mkdocs-jupyter") or name == "mkdocs-jupyter" for name in config.plugins)


def _outside_pages(config):
    """Repository path -> site path of every page whose source is outside docs/."""
    root, pages = _root(config), dict(PAGES_OUTSIDE_DOCS)
    if _jupyter_enabled(config):
        for path in sorted(p for pattern in NOTEBOOKS for p in glob.glob(os.path.join(root, pattern))):
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            pages[rel] = rel
    return pages


@event_priority(100)  # before mkdocs-jupyter's on_files, which claims the notebooks
def on_files(files, config):
    root = _root(config)
    for source, dest in _outside_pages(config).items():
        if files.get_file_from_path(dest) is None:
            files.append(_file_from(source, dest, root, config))
    return files


def _file_from(source, dest, root, config):
    """A File that mkdocs reads from `source` in the repository and places at `dest` on the site."""
    if not dest.endswith(".md"):  # a notebook: mkdocs-jupyter reads and converts it
        return File(source, root, config.site_dir, config.use_directory_urls)
    with open(os.path.join(root, source), encoding="utf-8") as f:
        return File.generated(config, dest, content=f.read())


def on_nav(nav, config, files):
    """Each notebook that mkdocs.yml's `extra: executed_notebooks` names is read by mkdocs-jupyter
    from its run (scripts/run_notebooks.py: outputs and pictures in it), at the same page. (Here,
    after every plugin's on_files: mkdocs-jupyter has made the notebooks its pages by now.)"""
    pattern = config.extra.get("executed_notebooks")
    if not pattern:
        return nav
    root = _root(config)
    for path in sorted(glob.glob(os.path.join(root, pattern))):
        page = files.get_file_from_path(os.path.relpath(path, root).replace(os.sep, "/"))
        if page is not None:
            page.abs_src_path, _ = run_notebooks.executed(path)
    return nav


def on_config(config):
    """The notebooks' nav section, from the files there are, before the nav is read."""
    notebooks = [p for p in _outside_pages(config) if p.startswith("notebooks/")]
    nav = config.nav
    if notebooks and nav is not None and "notebooks/" not in repr(nav):
        at = next((i for i, item in enumerate(nav) if isinstance(item, dict) and "API reference" in item), len(nav))
        nav.insert(at, {"Notebooks": notebooks})
    return config


def on_page_markdown(markdown, page, config, files):
    root = _root(config)
    docs = os.path.relpath(config.docs_dir, root).replace(os.sep, "/")
    outside = _outside_pages(config)
    by_site = {v: k for k, v in outside.items()}
    source = by_site.get(page.file.src_uri, posixpath.join(docs, page.file.src_uri))
    markdown = rewrite_links(markdown, source, page.file.src_uri, docs, outside,
                             lambda path: os.path.exists(os.path.join(root, path)))
    return drop_fence_options(markdown)


def on_page_content(html, page, config, files):
    """Math as MathML (scripts/docmath.py), on every page; and a notebook's links, which
    mkdocs-jupyter renders to HTML without mkdocs' link checks: pointed at the site's pages the
    same way, and a warning (so a failed --strict build) for one that leads to no page."""
    outside = _outside_pages(config)
    source = {v: k for k, v in outside.items()}.get(page.file.src_uri)
    notebook = source is not None and not source.endswith(".md")
    html = _math(html, page, dollars=notebook)
    if not notebook:
        return html
    docs = os.path.relpath(config.docs_dir, _root(config)).replace(os.sep, "/")

    def rewrite(m):
        repo_path = posixpath.normpath(posixpath.join(posixpath.dirname(source), m["target"]))
        page_path = outside.get(repo_path) or (repo_path[len(docs) + 1:] if repo_path.startswith(docs + "/") else None)
        target = page_path and files.get_file_from_path(page_path)
        if not target:
            log.warning(f"{source} links to '{m['target']}', which is no page of the site")
            return m[0]
        return f'href="{target.url_relative_to(page.file)}{m["anchor"] or ""}"'

    return NOTEBOOK_LINK.sub(rewrite, html)


def _math(html, page, dollars):
    """The page's marked LaTeX (and a notebook's $...$) as MathML; a formula that cannot be read
    is a warning, so --strict fails the build rather than show LaTeX source."""
    html = docmath.render_math(html, dollars=dollars)
    for latex in docmath.render_math.failed:
        log.warning(f"{page.file.src_uri}: math that latex2mathml cannot read: {latex[:80]!r}")
    return _NO_MATHJAX.sub("", html)


# nbconvert's notebook template loads MathJax from a CDN; the math is MathML already, and the site
# fetches nothing from other hosts
# (with no MathJax URL configured it writes `<script src="">`, which would load the page itself as a script)
_NO_MATHJAX = re.compile(r'<!-- load mathjax -->\s*<script src="[^"]*"[^>]*>\s*</script>|'
                         r'<script[^>]*src="[^"]*mathjax[^"]*"[^>]*>\s*</script>|'
                         r'<script type="text/x-mathjax-config">.*?</script>', re.S | re.I)
NOTEBOOK_LINK = re.compile(r'href="(?P<target>(?![a-z][a-z0-9+.-]*:)[^"#:]+\.(?:md|py))(?P<anchor>#[^"]*)?"')
log = logging.getLogger("mkdocs.hooks.notebooks")  # under "mkdocs", so --strict counts its warnings


FENCE_OPTIONS = ("title", "hl_lines", "linenums")  # what pymdownx.superfences knows
FENCE = re.compile(r"^(?P<head>[ \t]*(?:`{3,}|~{3,})[\w+-]+)(?P<options>[ \t]+[^`\n]*)$", re.M)


def drop_fence_options(markdown):
    """Fences with options of the project's own (docs/backprop_through_attention.md's
    `text check=scores`, read by its test) keep only those superfences knows: with another, it
    would not take the block as a fence at all and print it as a paragraph."""
    def keep(m):
        try:
            words = shlex.split(m["options"])
        except ValueError:
            return m[0]
        kept = [w.split("=", 1) for w in words if w.split("=", 1)[0] in FENCE_OPTIONS and "=" in w]
        return m["head"] + "".join(f' {k}="{v}"' for k, v in kept)
    return FENCE.sub(keep, markdown)


def rewrite_links(markdown, source, page, docs, outside, exists):
    """The Markdown of repository file `source`, shown as site page `page`, with its links
    (written for GitHub, relative to `source`) pointed at the site's pages. `docs` is the docs
    folder, `outside` maps repository paths of pages kept elsewhere to their site paths, and
    `exists(path)` says whether a repository path exists."""
    site_dir = posixpath.dirname(page)

    def rewrite(m):
        target = m["target"]
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
            return m[0]  # a URL, or an absolute path that mkdocs' validation judges
        repo_path = posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
        if repo_path in outside:
            page_path = outside[repo_path]
        elif repo_path.startswith(docs + "/"):
            page_path = repo_path[len(docs) + 1:]
        elif exists(repo_path):
            return m["text"]  # a repository file the site has no copy of
        else:
            return m[0]  # nothing there: left for mkdocs to report
        return f"[{m['text']}]({posixpath.relpath(page_path, site_dir or '.')}{m['anchor'] or ''})"

    return _outside_code(markdown, lambda text: LINK.sub(rewrite, text))


def _outside_code(markdown, fn):
    """fn applied to the Markdown outside fenced blocks and `code` spans."""
    parts = re.split(r"(^[ \t]*(?:```|~~~)[^\n]*\n.*?^[ \t]*(?:```|~~~)[ \t]*$|`[^`\n]+`)", markdown, flags=re.M | re.S)
    return "".join(fn(p) if i % 2 == 0 else p for i, p in enumerate(parts))
