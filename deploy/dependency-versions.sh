#!/bin/sh
# The package dependencies as resolved: one line per pin of a Package.resolved, sorted,
#   <identity> <version, or branch:<name>, or revision> <revision> <location>
# deploy/dependency-versions.txt is this list for the versions CI tested (Package.resolved itself is not
# committed). deploy/Dockerfile fails an image build whose resolution differs; scripts/check-deploy
# fails when the list differs from what this checkout resolves.
#   deploy/dependency-versions.sh [Package.resolved]   print the list
#   deploy/dependency-versions.sh --write              write deploy/dependency-versions.txt from ./Package.resolved
#   deploy/dependency-versions.sh --check              exit 1 (with the difference) when it is not what ./Package.resolved says
# POSIX sh and awk only: it runs in the Swift build image too.
set -eu

list() {
    echo "# Package dependencies as CI resolved them (deploy/dependency-versions.sh --write; checked by"
    echo "# scripts/check-deploy, enforced by deploy/Dockerfile). identity version revision location"
    # Package.resolved (v2 and v3) has one "key" : "value" per line; a pin ends where the next begins.
    awk '
        function value(line) { sub(/^[^:]*: *"?/, "", line); sub(/"?,? *$/, "", line); return line }
        function flush() { if (id != "") print id, (version != "" ? version : (branch != "" ? "branch:" branch : revision)), revision, location; id = version = branch = revision = location = "" }
        /"identity"/ { flush(); id = value($0) }
        /"location"/ { location = value($0) }
        /"version"/  { version = value($0); if (version == "null") version = "" }
        /"branch"/   { branch = value($0); if (branch == "null") branch = "" }
        /"revision"/ { revision = value($0) }
        END { flush() }
    ' "$1" | LC_ALL=C sort
}

root="$(cd "$(dirname "$0")/.." && pwd)"
case "${1:-Package.resolved}" in
    --write)
        list "$root/Package.resolved" >"$root/deploy/dependency-versions.txt"
        echo "wrote deploy/dependency-versions.txt ($(grep -vc '^#' "$root/deploy/dependency-versions.txt") packages)"
        ;;
    --check)
        if ! list "$root/Package.resolved" | diff -u "$root/deploy/dependency-versions.txt" -; then
            echo "deploy/dependency-versions.txt (-) differs from Package.resolved (+): after testing the new versions, run deploy/dependency-versions.sh --write" >&2
            exit 1
        fi
        ;;
    -*)
        echo "usage: deploy/dependency-versions.sh [Package.resolved | --write | --check]" >&2
        exit 2
        ;;
    *)
        [ -f "$1" ] || { echo "deploy/dependency-versions.sh: $1 does not exist (swift package resolve)" >&2; exit 1; }
        list "$1"
        ;;
esac
