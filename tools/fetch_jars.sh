#!/usr/bin/env bash
# fetch_jars.sh LIST DEST: downloads every jar that LIST (spark-jars.txt: `group:artifact:version
# sha256` lines, # comments) names from Maven Central into DEST, checks its sha256 and keeps it
# only if it matches. A jar already in DEST with the right sha256 is not fetched again; a jar in
# DEST that the list does not name (an older version) is removed. MAVEN_REPO overrides the base URL.
set -euo pipefail
list="$1"; dest="$2"
repo="${MAVEN_REPO:-https://repo1.maven.org/maven2}"
mkdir -p "$dest"
keep=()
while read -r coord sha rest; do
  [[ -z "${coord:-}" || "$coord" == \#* ]] && continue
  IFS=: read -r group artifact version <<<"$coord"
  if [[ -z "$version" || ! "$sha" =~ ^[0-9a-f]{64}$ ]]; then
    echo "fetch_jars: bad line in $list: $coord $sha" >&2; exit 2
  fi
  file="$artifact-$version.jar"
  keep+=("$file")
  if [[ -f "$dest/$file" ]] && echo "$sha  $dest/$file" | sha256sum --check --status; then
    continue
  fi
  url="$repo/${group//.//}/$artifact/$version/$file"
  echo "== fetching $coord ($url)"
  curl -fsSL --retry 3 -o "$dest/$file.part" "$url"
  if ! echo "$sha  $dest/$file.part" | sha256sum --check --status; then
    echo "fetch_jars: sha256 of $file is $(sha256sum "$dest/$file.part" | cut -d' ' -f1), $list pins $sha" >&2
    rm -f "$dest/$file.part"; exit 1
  fi
  mv "$dest/$file.part" "$dest/$file"
done < "$list"
for f in "$dest"/*.jar; do
  [[ -e "$f" ]] || continue
  base="$(basename "$f")"
  [[ " ${keep[*]} " == *" $base "* ]] || { echo "== removing $base (not in $list)"; rm -f "$f"; }
done
