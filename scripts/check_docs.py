#!/usr/bin/env python3
"""check_docs.py — docs/ stays a manual whose every reference resolves.

Checks, from the source tree's root (the argument, default the current
directory):

  1. every relative link and image in docs/*.md and README.md names a file
     that exists, and a #fragment names a heading of the target page
     (GitHub's anchors: lower case, punctuation dropped, spaces to hyphens);
  2. every results/NAME and figures/NAME written in docs/*.md (in a link or
     in running text) exists under docs/;
  3. every file under docs/results and docs/figures (that git tracks, in a
     checkout) is named in some page: nothing is kept that no page cites;
  4. every page in docs/ is linked from the index, docs/README.md;
  5. every docs/NAME.md that the code, tests, scripts or build files name
     exists (comments and --help texts point readers there).

Prints one line per problem and exits 1 if there was any; 0 otherwise.
Needs nothing but python3; no build.
"""
import os
import re
import subprocess
import sys

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
MENTION = re.compile(r"(?<![\w/.-])(?:docs/)?((?:results|figures)/[A-Za-z0-9_.+-]+)")
DOC_PATH = re.compile(r"\bdocs/([A-Za-z0-9_-]+\.md)")
CODE_DIRS = ("src", "include", "apps", "tools", "bench", "tests", "scripts", "cmake")
CODE_FILES = ("CMakeLists.txt", "Makefile", "README.md")
CODE_EXT = (".c", ".h", ".py", ".sh", ".bash", ".txt", ".cmake", ".md", ".in")


def strip_code_blocks(text):
    """The text with fenced code blocks blanked (line numbers kept)."""
    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append("")
        else:
            out.append("" if fenced else line)
    return out


def slug(heading):
    s = heading.strip().lower().replace("`", "")
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen, names = {}, set()
        with open(path, encoding="utf-8") as f:
            for line in strip_code_blocks(f.read()):
                m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
                if not m:
                    continue
                base = slug(m.group(1))
                n = seen.get(base, 0)
                seen[base] = n + 1
                names.add(base if n == 0 else "%s-%d" % (base, n))
        cache[path] = names
    return cache[path]


def check_links(root, page, lines, problems):
    here = os.path.dirname(page)
    linked = set()
    for no, line in enumerate(lines, 1):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue  # http:, https:, mailto:
            path, _, frag = target.partition("#")
            dest = os.path.normpath(os.path.join(here, path)) if path else page
            where = "%s:%d" % (os.path.relpath(page, root), no)
            if not os.path.exists(dest):
                problems.append("%s: link to missing %s" % (where, target))
                continue
            linked.add(dest)
            if frag and dest.endswith(".md") and frag not in anchors(dest):
                problems.append("%s: no heading #%s in %s" % (where, frag, path or "this page"))
    return linked


def check_mentions(root, page, lines, problems, named):
    for no, line in enumerate(lines, 1):
        for rel in MENTION.findall(line):
            rel = rel.rstrip(".")
            named.add(rel)
            if not os.path.exists(os.path.join(root, "docs", rel)):
                problems.append("%s:%d: %s does not exist" % (os.path.relpath(page, root), no, rel))


def kept_files(root):
    """results/ and figures/ files as "results/NAME": those git tracks when the
    tree is a checkout (a bench run just now leaves its files untracked until
    a page cites them), else every file there."""
    subs = ("results", "figures")
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "--", "docs/results", "docs/figures"],
                             capture_output=True, text=True, check=True).stdout.split()
        if out:
            return sorted(p[len("docs/"):] for p in out)
    except (OSError, subprocess.CalledProcessError):
        pass
    return sorted("%s/%s" % (sub, f) for sub in subs for f in os.listdir(os.path.join(root, "docs", sub)))


def code_files(root):
    for name in CODE_FILES:
        if os.path.isfile(os.path.join(root, name)):
            yield os.path.join(root, name)
    for top in CODE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith(CODE_EXT) or f == "CMakeLists.txt":
                    yield os.path.join(dirpath, f)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    docs = os.path.join(root, "docs")
    pages = sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    problems, named, linked_from_index = [], set(), set()
    for page in pages + [os.path.join(root, "README.md")]:
        with open(page, encoding="utf-8") as f:
            lines = strip_code_blocks(f.read())
        linked = check_links(root, page, lines, problems)
        if page == os.path.join(docs, "README.md"):
            linked_from_index = linked
        if page.startswith(docs + os.sep):
            # Commands in code blocks name results files too.
            with open(page, encoding="utf-8") as f:
                check_mentions(root, page, f.read().split("\n"), problems, named)
    for rel in kept_files(root):
        if rel not in named:
            problems.append("docs/%s: no page names it" % rel)
    for page in pages:
        if os.path.basename(page) != "README.md" and page not in linked_from_index:
            problems.append("%s: not linked from docs/README.md" % os.path.relpath(page, root))
    for path in code_files(root):
        if os.path.samefile(path, __file__):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for no, line in enumerate(f, 1):
                for name in DOC_PATH.findall(line):
                    if not os.path.exists(os.path.join(docs, name)):
                        problems.append("%s:%d: docs/%s does not exist" % (os.path.relpath(path, root), no, name))
    problems = list(dict.fromkeys(problems))  # README.md is read as a page and as code
    for p in problems:
        print(p)
    print("check_docs: %d page(s), %d problem(s)" % (len(pages), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
