#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Checks of the redlock tool's manual. The build generates it from the
# tool's own tables (tool/commands.c, tool/manual.c; tool/docgen/) into
# BUILD/man/redlock.1 and BUILD/docs/cli.md.
#
#   scripts/check-cli-docs.sh generated MAN_PAGE CLI_MD BUILD
#       The copies in the sources, man/redlock.1 and docs/cli.md, are the
#       generated MAN_PAGE and CLI_MD; otherwise prints the diff and the
#       command that updates them (cmake --build BUILD --target update-docs).
#   scripts/check-cli-docs.sh help TOOL CLI_MD...
#       Every "$ redlock [CMD] --help" block of each CLI_MD is what TOOL
#       prints for it, byte for byte, on stdout with nothing on stderr and
#       exit status 0; there is one for redlock and for each command its
#       --help lists.
#   scripts/check-cli-docs.sh man MAN_PAGE [TOOL]
#       groff (through man-db) has no warning about the page, and none with
#       all of groff's warnings on; lexgrog reads its NAME section; its
#       ENVIRONMENT section has an entry for every variable tool/*.c reads
#       (getenv) or gives CMD (setenv). With TOOL, the page says what TOOL's
#       --help says: in the page's text (groff -Tascii, not hyphenated,
#       whitespace collapsed) are the usage of redlock and of each command,
#       each command's description and exit statuses, and the help of each
#       option and variable listed (from a capital letter, with a full stop).
# Exits 1 on any problem, listing them all; 2 on a usage problem.
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C

failed=0
fail() {
  echo "check-cli-docs: $*" >&2
  failed=1
}
usage() {
  sed -n '7,26p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

check_generated() {
  local man_page=$1 cli_md=$2 build=$3
  local pair source generated
  for pair in "man/redlock.1=$man_page" "docs/cli.md=$cli_md"; do
    source=${pair%%=*}
    generated=${pair#*=}
    [ -f "$generated" ] || { fail "$generated: not generated (build the docs target)"; continue; }
    if ! diff -u "$source" "$generated"; then
      fail "$source is not what the build generates ($generated): diff above"
    fi
  done
  if [ "$failed" -ne 0 ]; then
    echo "check-cli-docs: update the sources with: cmake --build $build --target update-docs" >&2
    exit 1
  fi
  echo "check-cli-docs: man/redlock.1 and docs/cli.md are the generated ones"
}

# The "$ redlock [CMD] --help" blocks of a Markdown file, into DIR/NAME
# (NAME: redlock or the command), one file each.
extract_help_blocks() {
  awk -v dir="$2" '
    state == 0 && /^```text$/ { state = 1; next }
    state == 1 {
      state = 0
      if ($0 !~ /^\$ redlock( [a-z][a-z-]*)? --help$/) next
      name = $0
      sub(/^\$ redlock ?/, "", name); sub(/ ?--help$/, "", name)
      if (name == "") name = "redlock"
      out = dir "/" name
      if (seen[name]++) { print "two blocks for " name > "/dev/stderr"; bad = 1 }
      printf "" > out
      state = 2
      next
    }
    state == 2 { if ($0 == "```") { close(out); state = 0 } else print > out }
    END { exit bad }
  ' "$1"
}

check_help() {
  local tool=$1
  shift
  [ -x "$tool" ] || { fail "$tool: not an executable"; exit 1; }
  local work md name commands n
  work=$(mktemp -d)
  # shellcheck disable=SC2064 # expand now: work is local
  trap "rm -rf '$work'" EXIT
  commands=$("$tool" --help | awk '/^Commands:$/ { on = 1; next } on && /^$/ { on = 0 } on { print $1 }')
  [ -n "$commands" ] || { fail "$tool --help lists no commands (under \"Commands:\")"; exit 1; }
  for md in "$@"; do
    rm -rf "$work/blocks" "$work/out"
    mkdir "$work/blocks" "$work/out"
    extract_help_blocks "$md" "$work/blocks" || fail "$md: a help block is there twice"
    n=0
    for name in redlock $commands; do
      local args=(--help) shown="redlock --help"
      if [ "$name" != redlock ]; then
        args=("$name" --help)
        shown="redlock $name --help"
      fi
      if [ ! -f "$work/blocks/$name" ]; then
        fail "$md: no block for \`$shown\` (a \`\`\`text block starting with \"\$ $shown\")"
        continue
      fi
      n=$((n + 1))
      local rc=0
      "$tool" "${args[@]}" >"$work/out/$name" 2>"$work/out/$name.err" || rc=$?
      [ "$rc" -eq 0 ] || fail "$shown exits $rc"
      [ ! -s "$work/out/$name.err" ] || fail "$shown writes on stderr: $(cat "$work/out/$name.err")"
      if ! diff -u --label "$md: \$ $shown" --label "\$ $tool ${args[*]}" \
          "$work/blocks/$name" "$work/out/$name"; then
        fail "$md: the block of \`$shown\` is not what the tool prints (diff above)"
      fi
    done
    for name in "$work"/blocks/*; do
      name=${name##*/}
      [ "$name" = redlock ] || grep -qxF "$name" <<<"$commands" ||
        fail "$md: a block for \`redlock $name --help\`, which is no command"
    done
    [ "$failed" -ne 0 ] || echo "check-cli-docs: $md: the $n --help blocks are what the tool prints"
  done
  [ "$failed" -eq 0 ] || exit 1
}

check_man() {
  local page=$1 t warnings whatis
  [ -f "$page" ] || { fail "$page: no such file"; exit 1; }
  for t in man lexgrog groff; do
    command -v "$t" >/dev/null || { fail "$t not found (Debian: apt-get install man-db groff-base)"; exit 1; }
  done
  # man -Z stops after troff: its output goes to /dev/null, the warnings stay.
  if ! warnings=$(man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null); then
    fail "man could not format $page: $warnings"
    exit 1
  fi
  [ -z "$warnings" ] || { printf '%s\n' "$warnings" >&2; fail "$page: man's groff warnings above"; }
  warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1) || true
  [ -z "$warnings" ] || { printf '%s\n' "$warnings" >&2; fail "$page: groff -ww warnings above"; }
  if ! whatis=$(lexgrog "$page" 2>&1) || ! grep -q ': "redlock - ' <<<"$whatis"; then
    fail "$page: lexgrog cannot read the NAME section: $whatis"
  fi

  # The ENVIRONMENT section's entries: the line after each .TP.
  local entries variables v
  entries=$(awk '/^\.SH / { on = ($0 ~ /^\.SH "?ENVIRONMENT"?$/) } on && tag { print; tag = 0 }
                 on && /^\.TP/ { tag = 1 }' "$page" | sed -E 's/\\f[BIRP]//g; s/\\-/-/g')
  [ -n "$entries" ] || fail "$page: no entries in ENVIRONMENT"
  variables=$(grep -ohE '\b(getenv|setenv)\("[A-Z_][A-Z0-9_]*"' tool/*.c | sed -E 's/.*"(.*)"/\1/' | sort -u)
  [ -n "$variables" ] || fail "no getenv or setenv found in tool/*.c (have the sources changed shape?)"
  for v in $variables; do
    grep -qE "(^|[^A-Z0-9_])$v([^A-Z0-9_]|$)" <<<"$entries" ||
      fail "$page: the tool uses \$$v, which ENVIRONMENT has no entry for"
  done
  [ "$failed" -ne 0 ] ||
    echo "check-cli-docs: $page: no groff warnings; ENVIRONMENT has $(tr '\n' ' ' <<<"$variables")"
  [ $# -lt 2 ] || check_man_says_help "$page" "$2"
  [ "$failed" -eq 0 ] || exit 1
}

# The pieces of a --help (stdin) the man page must say, one a line, with
# whitespace collapsed: the usage; with all=1 (a command's), every
# paragraph but the lists; the help of each row of the lists Options and
# Environment, from a capital letter, with a full stop.
help_pieces() {
  awk -v all="$1" '
    function emit(s) { gsub(/[ \t]+/, " ", s); sub(/^ /, "", s); sub(/ $/, "", s); if (s != "") print s }
    function row_done() {
      if (row == "") return
      if (row !~ /\.$/) row = row "."
      emit(toupper(substr(row, 1, 1)) substr(row, 2)); row = ""
    }
    function para_done() { if (para != "") emit(para); para = "" }
    /^$/ { row_done(); para_done(); list = ""; next }
    /^Usage: / { sub(/^Usage: /, ""); para = $0; kind = "usage"; next }
    /^(Options|Environment):$/ { list = "rows"; next }
    /^Commands:$/ { list = "skip"; next }
    list == "skip" { next }
    list == "rows" && /^  [^ ]/ { row_done(); line = $0; sub(/^  [^ ]+( [^ ]+)*  +/, "", line); row = line; next }
    list == "rows" { row = row " " $0; next }
    kind == "usage" && para != "" { para = para " " $0; next }
    all == 1 { para = para " " $0 }
    END { row_done(); para_done() }'
}

check_man_says_help() {
  local page=$1 tool=$2 text commands name piece missing=0
  text=$(groff -man -Tascii -rHY=0 -rLL=2000n -P-cbou "$page" 2>/dev/null | tr -s ' \n' '  ')
  commands=$("$tool" --help | awk '/^Commands:$/ { on = 1; next } on && /^$/ { on = 0 } on { print $1 }')
  for name in redlock $commands; do
    local args=(--help) all=1
    if [ "$name" = redlock ]; then all=0; else args=("$name" --help); fi
    while IFS= read -r piece; do
      if [[ "$text" != *"$piece"* ]]; then
        fail "$page does not say what \`redlock ${args[*]}\` says: $piece"
        missing=1
      fi
    done < <("$tool" "${args[@]}" | help_pieces "$all")
  done
  [ "$missing" -ne 0 ] || echo "check-cli-docs: $page says what $tool --help says"
}

[ $# -ge 1 ] || usage
mode=$1
shift
case $mode in
  generated) [ $# -eq 3 ] || usage; check_generated "$@" ;;
  help) [ $# -ge 2 ] || usage; check_help "$@" ;;
  man) [ $# -eq 1 ] || [ $# -eq 2 ] || usage; check_man "$@" ;;
  *) usage ;;
esac
