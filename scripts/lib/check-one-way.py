#!/usr/bin/env python3
"""Checks that the code keeps to the one way Colony does each of these things (docs/architecture.md,
"One way per concern"), in Services/, Shared/ and the console:

- a Postgres row is read cell by cell in the statement's order (`row.read { … }`, `RowCells`,
  `row.value(T.self)`, `rows.read`/`values`/`firstValue`; a page as one cell: `PageColumns`), never by
  PostgresNIO's tuple `decode((A, B).self)`, `decode(T.self)` on a row or `makeRandomAccess()`.

    scripts/lib/check-one-way.py    exits 1 and lists each FILE:LINE that does it another way.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RULES = [
    (re.compile(r"\.decode\(\("), "a row read as a tuple: read its cells in order (row.read { … } / RowCells)"),
    (re.compile(r"\bmakeRandomAccess\("), "a row read by column name: read its cells in order (row.read { … } / RowCells)"),
    (re.compile(r"\b(row|rows|r|first|last|result|results)\??\.decode\("), "PostgresNIO's decode on a row: row.value(T.self) / rows.values(T.self)"),
    (re.compile(r"(\$0|!|\])\.decode\("), "PostgresNIO's decode on a row: row.value(T.self) / rows.values(T.self)"),
    (re.compile(r"logger\)\.decode\("), "PostgresNIO's decode on a query's rows: rows.values(T.self) / rows.read { … }"),
]


def sources():
    for top in ("Services", "Shared"):
        for folder, dirs, names in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d != "Generated"]
            for name in names:
                if name.endswith(".swift"):
                    yield os.path.join(folder, name)


def main():
    problems = []
    for path in sources():
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                code = line.split("//", 1)[0]
                for pattern, why in RULES:
                    if pattern.search(code):
                        problems.append(f"{os.path.relpath(path, ROOT)}:{number}: {why}")
    for problem in problems:
        print(problem)
    if problems:
        print(f"check-one-way: {len(problems)} place(s) do it another way", file=sys.stderr)
        return 1
    print("check-one-way: every row is read one way")
    return 0


if __name__ == "__main__":
    sys.exit(main())
