#!/usr/bin/env python3
"""Checks the relative links of the project's Markdown: every linked file exists, and every
#fragment names a heading of its target (GitHub's anchors). Links to web addresses are not fetched.

    scripts/lib/check-doc-links.py [FILE.md ...]   (default: README.md, docs/, every README under
                                                   Services/, Clients/ and deploy/)
Exits 1 and lists each broken link as FILE:LINE: LINK (why).
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def default_files():
    files = ["README.md"]
    files += sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))
    for top in ("Services", "Clients", "deploy"):
        for folder, dirs, names in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d != "Generated"]
            files += [os.path.relpath(os.path.join(folder, n), ROOT) for n in names if n == "README.md"]
    return files


def prose_lines(path):
    """(number, line) of the lines outside fenced code blocks."""
    inside = False
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if FENCE.match(line):
                inside = not inside
                continue
            if not inside:
                yield number, line


def slug(heading):
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)  # GitHub keeps letters, digits, _, - and spaces
    return text.replace(" ", "-")


anchor_cache = {}


def anchors(path):
    if path not in anchor_cache:
        seen, found = {}, set()
        for _, line in prose_lines(path):
            match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not match:
                continue
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        anchor_cache[path] = found
    return anchor_cache[path]


def check(relative):
    problems = []
    path = os.path.join(ROOT, relative)
    for number, line in prose_lines(path):
        line = re.sub(r"`[^`]*`", "", line)  # links are never inside code spans
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, …
                continue
            file_part, _, fragment = target.partition("#")
            linked = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not os.path.exists(linked):
                problems.append(f"{relative}:{number}: {target} (no such file)")
            elif fragment and linked.endswith(".md") and fragment not in anchors(linked):
                problems.append(f"{relative}:{number}: {target} (no heading #{fragment} there)")
    return problems


def main():
    files = sys.argv[1:] or default_files()
    problems = [problem for relative in files for problem in check(relative)]
    for problem in problems:
        print(problem)
    print(f"check-doc-links: {len(files)} files, {len(problems)} broken links", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
