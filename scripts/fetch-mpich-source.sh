#!/usr/bin/env bash
# Unpacks MPICH's source from Debian's source package into DEST (default
# ./mpich-src): `apt-get source mpich` after adding deb-src entries derived from
# the apt sources this machine already uses for its own distribution (so no
# mirror is named here). Debian's patches are applied, as for Debian's build.
#
# usage: fetch-mpich-source.sh DEST
set -euo pipefail

dest=${1:?usage: fetch-mpich-source.sh DEST}
. /etc/os-release
codename=${VERSION_CODENAME:?/etc/os-release names no VERSION_CODENAME}

src_list=/etc/apt/sources.list.d/gencoll-deb-src.sources
derive_deb_src() {
  # deb822 files: copy each stanza that serves this distribution as deb-src.
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ "$f" = "$src_list" ] && continue
    [ -e "$f" ] || continue
    awk -v code="$codename" '
      BEGIN { RS=""; ORS="\n\n" }
      /(^|\n)Types:[^\n]*deb([ \n]|$)/ && /(^|\n)Suites:[^\n]*/ {
        if ($0 !~ ("Suites:[^\n]*" code)) next
        if ($0 ~ /(^|\n)Enabled: *no/) next
        sub(/Types:[^\n]*/, "Types: deb-src"); print
      }' "$f"
  done
  # One-line format: "deb [opts] URI SUITE COMPONENTS..." for this distribution.
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -e "$f" ] || continue
    awk -v code="$codename" '$1 == "deb" && $0 ~ (" " code "[^ ]* ") { $1 = "deb-src"; print }' "$f"
  done
}

if [ -z "$(apt-cache showsrc mpich 2>/dev/null)" ]; then
  entries=$(derive_deb_src)
  [ -n "$entries" ] || { echo "fetch-mpich-source: no apt source for '$codename' to derive deb-src entries from" >&2; exit 1; }
  # Stanzas and one-line entries go to separate files, as apt requires.
  printf '%s\n' "$entries" | grep -v '^deb-src ' > "$src_list" || true
  printf '%s\n' "$entries" | grep '^deb-src ' > /etc/apt/sources.list.d/gencoll-deb-src.list || rm -f /etc/apt/sources.list.d/gencoll-deb-src.list
  [ -s "$src_list" ] || rm -f "$src_list"
  apt-get update -qq
fi

mkdir -p "$dest"
cd "$dest"
if ! ls -d mpich-*/ >/dev/null 2>&1; then
  command -v dpkg-source >/dev/null || apt-get install -y -qq dpkg-dev
  apt-get source -qq mpich
fi
ls -d "$PWD"/mpich-*/ | head -n1
