#!/usr/bin/env bash
# What a release carries and installs: `make distdir` must hold every file git
# tracks (kept results under benchmarks/results/, .ci/ and .gitignore aside),
# so that a tarball builds the MPICH module, the Open MPI component and runs
# the README's two commands; `make install` must put the shipped profiles and
# their tuned files under $(pkgdatadir); and the tools must find a shipped
# profile by its name, or say which names there are.
# Skipped (77) outside a git checkout, where there is no list to hold it to.
set -euo pipefail
builddir=$(pwd)
srcdir=$(cd "${srcdir:-.}" && pwd)
command -v git > /dev/null && git -C "$srcdir" rev-parse --is-inside-work-tree > /dev/null 2>&1 ||
  { echo "SKIP: $srcdir is not a git checkout"; exit 77; }
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2> /dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

make -s -C "$builddir" distdir distdir="$tmp/dist" > "$tmp/distdir.log" 2>&1 ||
  { cat "$tmp/distdir.log"; fail "make distdir failed"; }
(cd "$tmp/dist" && find . -type f | sed 's|^\./||' | sort) > "$tmp/have"
git -C "$srcdir" ls-files | grep -v -E '^(benchmarks/results/.+/|\.ci/|\.gitignore$)' |
  grep -v -E '^benchmarks/results/[^/]+\.txt$' | sort > "$tmp/want"
missing=$(comm -13 "$tmp/have" "$tmp/want")
[ -z "$missing" ] || fail "the release tarball lacks these tracked files (add them to EXTRA_DIST in Makefile.am):
$missing"
echo "ok: make distdir holds all $(wc -l < "$tmp/want") tracked files"

make -s -C "$builddir" install-data DESTDIR="$tmp/inst" > "$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "make install-data failed"; }
pkgdata=$(find "$tmp/inst" -type d -path '*/share/gencoll' | head -n 1)
[ -n "$pkgdata" ] || fail "make install-data made no share/gencoll"
for f in profiles/delta.json profiles/small-synthetic.json json-configs/delta.json json-configs/delta-ompi-rules.conf; do
  [ -f "$pkgdata/$f" ] || fail "make install-data did not install $f"
done
echo "ok: make install-data puts the shipped profiles and their tuned files in $pkgdata"

sim=$builddir/selection/gencoll-sim
[ -x "$sim" ] || { echo "SKIP: no $sim"; exit 77; }
# A name is looked up only where no file of that name exists here.
cd "$tmp"
"$sim" --profile small-synthetic --ranks 4 -m 1K > by-name.txt 2>&1 || { cat by-name.txt; fail "--profile small-synthetic"; }
"$sim" --profile "$srcdir/selection/profiles/small-synthetic.json" --ranks 4 -m 1K > by-path.txt
cmp -s <(grep -v -E "^(machine|simulation_wall_s):" by-name.txt) <(grep -v -E "^(machine|simulation_wall_s):" by-path.txt) ||
  fail "--profile small-synthetic and its path simulate differently"
grep -q '^machine: .*selection/profiles/small-synthetic.json' by-name.txt || fail "--profile small-synthetic: the file used is not named"
if "$sim" --profile no-such-machine --ranks 4 > bad.txt 2>&1; then fail "--profile no-such-machine was accepted"; fi
grep -q 'no-such-machine: cannot open the profile for reading (nor is it a shipped profile: .*delta.*small-synthetic' bad.txt ||
  { cat bad.txt; fail "--profile no-such-machine: the message does not list the shipped profiles"; }
echo "ok: gencoll-sim finds a shipped profile by name and lists them for an unknown one"
