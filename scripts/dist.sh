#!/usr/bin/env bash
# make dist: the source tarball dist/caracal-VERSION.tar.gz of the files git tracks, as they
# are in the work tree (so uncommitted edits of tracked files are in it; untracked files,
# builds and venvs are not). Reproducible: sorted, owner 0, mtime of the last commit.
# Unpacked anywhere, it builds and tests without git: make test (or cmake -S . -B build).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist}
version=$(head -n1 python/caracal/VERSION)
name=caracal-$version
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "dist: not a git work tree (make dist needs git ls-files)" >&2; exit 1; }
mkdir -p "$out"
list=$(mktemp)
trap 'rm -f "$list"' EXIT
# tracked files that still exist (a deleted but unstaged file would make tar fail)
git ls-files -z | while IFS= read -r -d '' f; do [ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"; done >"$list"
mtime=$(git log -1 --format=%cI 2>/dev/null || date -u +%Y-%m-%dT%H:%M:%SZ)
tar --null -T "$list" --sort=name --owner=0 --group=0 --numeric-owner --mtime="$mtime" \
    --transform "s,^,$name/," -cf - | gzip -n >"$out/$name.tar.gz"
echo "$out/$name.tar.gz"
