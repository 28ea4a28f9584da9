#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Check the manual page man/redlock.1 against the tool it describes:
#   1. groff (through man-db) has no warning about it, and lexgrog parses
#      its NAME section;
#   2. it documents what the sources in tool/ accept and return:
#      - every command (main.c's command table, cli.h's cmd_* functions):
#        in SYNOPSIS, and as a subsection of COMMANDS;
#      - every option: global ones (main.c's struct option table and its
#        getopt string) and each command's (the cli_option table in its
#        cmd_* function, plus options.c's --help) as an entry of OPTIONS;
#        each command's options also in its COMMANDS subsection;
#      - every exit status: the EX_* names the tool returns (numbers from
#        <sysexits.h>), cli.h's CLI_EXIT_* numbers and the numbers in the
#        tool's return and _exit() statements, each as an entry of EXIT
#        STATUS; an entry there that the tool never returns is stale;
#      - every variable the tool reads (getenv) or gives CMD (setenv), as
#        an entry of ENVIRONMENT.
# Lists everything missing and fails; fails too when it extracts nothing of
# a kind (the sources changed shape). Needs man-db, groff and a C compiler
# (${CC:-cc}, for <sysexits.h>). Usage: scripts/check-man.sh [PAGE]
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C

page=${1:-man/redlock.1}
tool=tool
cc=${CC:-cc}
failed=0

fail() {
  echo "check-man: $*" >&2
  failed=1
}
die() {
  echo "check-man: $*" >&2
  exit 1
}
# A list, one item a line, on one line.
words() { tr '\n' ' ' <<<"$1" | sed 's/ *$//'; }

[ -f "$page" ] || die "$page: no such file"
for t in man lexgrog groff "$cc"; do
  command -v "$t" >/dev/null || die "$t not found (Debian: apt-get install man-db groff gcc)"
done

# --- 1. groff warnings, NAME section -----------------------------------------

# man -Z stops after troff: its output goes to /dev/null, the warnings stay.
if ! warnings=$(man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null); then
  die "man could not format $page: $warnings"
fi
if [ -n "$warnings" ]; then
  printf '%s\n' "$warnings" >&2
  fail "$page: groff warnings above"
fi
if ! whatis=$(lexgrog "$page" 2>&1) || ! grep -q ': "redlock - ' <<<"$whatis"; then
  fail "$page: lexgrog cannot parse the NAME section: $whatis"
fi

# --- 2a. what the page says, by section ----------------------------------------

# The page as plain text, one record per line: SECTION<TAB>SUBSECTION<TAB>
# TAG<TAB>text, where TAG is 1 for the tag line of a .TP entry. Font escapes,
# quotes and the request name are dropped, \- becomes -.
page_records() {
  sed -E 's/\\f(\(..|\[[^]]*\]|.)//g; s/\\-/-/g; s/\\&//g; s/\\~/ /g; s/\\\(aq/'"'"'/g' "$page" |
    awk '
      /^\.\\"/ { next }
      /^\.SH/ { sec = $0; sub(/^\.SH[ \t]*/, "", sec); gsub(/"/, "", sec); sub_ = ""; tag = 0; next }
      /^\.SS/ { sub_ = $0; sub(/^\.SS[ \t]*/, "", sub_); gsub(/"/, "", sub_); tag = 0; next }
      /^\.TP/ { tag = 1; next }
      {
        line = $0
        if (line ~ /^\.[A-Za-z]+/) {
          if (line !~ /^\.(B|I|R|BI|BR|IB|IR|RB|RI|SM|SB)([ \t]|$)/) next  # layout requests
          sub(/^\.[A-Za-z]+[ \t]*/, "", line)
        }
        gsub(/"/, "", line)
        if (line == "") next
        printf "%s\t%s\t%d\t%s\n", sec, sub_, tag, line
        tag = 0
      }'
}
records=$(page_records)
[ -n "$records" ] || die "$page: no text found"

# Text of a section (and subsection, if given), or only its tag lines.
text_of() { awk -F '\t' -v s="$1" -v ss="${2-}" '$1 == s && (ss == "" || $2 == ss) { print $4 }' <<<"$records"; }
tags_of() { awk -F '\t' -v s="$1" '$1 == s && $3 == 1 { print $4 }' <<<"$records"; }
# Whether TEXT (stdin) holds WORD with no letter, digit, - or _ either side.
# shellcheck disable=SC2001 # sed escapes the regex metacharacters of WORD
has_word() { grep -qE "(^|[^A-Za-z0-9_-])$(sed 's/[.[\*^$]/\\&/g' <<<"$1")([^A-Za-z0-9_-]|$)"; }

for s in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS "EXIT STATUS" ENVIRONMENT; do
  [ -n "$(text_of "$s")" ] || fail "$page: no $s section"
done

# --- 2b. what the tool accepts -------------------------------------------------

commands=$(
  {
    grep -ohE '\{ *"[a-z][a-z0-9-]*", *cmd_[a-z_]+ *\}' "$tool"/main.c | sed -E 's/^\{ *"([^"]*)".*/\1/'
    grep -ohE '^int cmd_[a-z_]+\(' "$tool"/cli.h | sed -E 's/^int cmd_([a-z_]+)\(/\1/'
  } | sort -u
)
[ -n "$commands" ] || die "no commands found in $tool/main.c and $tool/cli.h (has their declaration changed?)"

# Long options of getopt_long tables (main.c's globals, options.c's --help).
getopt_longs=$(grep -ohE '\{ *"[a-z][a-z0-9-]*", *(no|required|optional)_argument' "$tool"/*.c |
  sed -E 's/^\{ *"([^"]*)".*/\1/' | sort -u)
# Each command's cli_option table, as COMMAND OPTION lines: the table sits in
# the command's cmd_* function.
command_options=$(awk '
  /^int cmd_[a-z_]+\(/ { fn = $0; sub(/^int cmd_/, "", fn); sub(/\(.*/, "", fn) }
  /^}/ { fn = "" }
  {
    line = $0
    while (match(line, /\{ *"[a-z][a-z0-9-]*", *(true|false), *cli_opt_/)) {
      entry = substr(line, RSTART, RLENGTH)
      line = substr(line, RSTART + RLENGTH)
      sub(/^\{ *"/, "", entry); sub(/".*/, "", entry)
      print (fn == "" ? "?" : fn), entry
    }
  }' "$tool"/cmd_*.c | sort -u)
[ -n "$getopt_longs" ] || die "no getopt_long option tables found in $tool/*.c"
[ -n "$command_options" ] || die "no cli_option tables found in $tool/cmd_*.c"
if grep -q '^? ' <<<"$command_options"; then
  die "cli_option table outside a cmd_* function: $(grep '^? ' <<<"$command_options" | tr '\n' ' ')"
fi
long_options=$(printf '%s\n%s\n' "$getopt_longs" "$(cut -d' ' -f2 <<<"$command_options")" | sort -u)
short_options=$(grep -ohE 'getopt_long\([^;]*"[+:]?[A-Za-z:]+"' "$tool"/*.c |
  grep -oE '"[+:]?[A-Za-z:]+"' | tr -d '"+:' | fold -w1 | sort -u)
[ -n "$short_options" ] || die "no getopt short options found in $tool/*.c"

# --- 2c. what the tool returns -------------------------------------------------

# Numbers of the EX_* names the tool uses, from <sysexits.h> itself.
ex_names=$(grep -ohE '\bEX_[A-Z]+\b' "$tool"/*.c "$tool"/*.h | sort -u)
[ -n "$ex_names" ] || die "no EX_* exit statuses found in $tool"
ex_numbers=$( { echo '#include <sysexits.h>'; for n in $ex_names; do echo "$n"; done; } |
  "$cc" -E -P -x c - | grep -E '^[ \t]*[0-9A-Z_]+[ \t]*$' | tr -d ' \t')
[ "$(wc -l <<<"$ex_numbers")" -eq "$(wc -w <<<"$ex_names")" ] ||
  die "cannot resolve $(words "$ex_names") with <sysexits.h>: got $(words "$ex_numbers")"
if grep -qvE '^[0-9]+$' <<<"$ex_numbers"; then
  die "not defined in <sysexits.h>: $(grep -vE '^[0-9]+$' <<<"$ex_numbers" | tr '\n' ' ')"
fi
# The tool's own statuses: #define CLI_EXIT_NAME N.
cli_numbers=$(sed -nE 's/^#define[ \t]+CLI_EXIT_[A-Z_]+[ \t]+([0-9]+).*/\1/p' "$tool"/cli.h)
[ -n "$cli_numbers" ] || die "no CLI_EXIT_* statuses found in $tool/cli.h"
# Numbers in return and _exit() statements, once strings, characters,
# comments, function calls' arguments, subscripts and negative numbers are
# dropped (what is left are statuses: 0, 126, 127, the 128 of 128 + N).
literal_numbers=$(awk -v q="'" '
  {
    line = $0
    gsub(/\\./, "", line)                     # escapes, inside literals
    gsub(/"[^"]*"/, " ", line); gsub(q "[^" q "]*" q, " ", line)
    if (in_comment) { if (!sub(/^.*\*\//, "", line)) next; in_comment = 0 }
    gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, " ", line)
    if (sub(/\/\*.*$/, "", line)) in_comment = 1
    sub(/\/\/.*$/, "", line)
    gsub(/(^|[^A-Za-z0-9_])_exit[ \t]*\(/, " return (", line)
    if (stmt == "") {
      if (!match(line, /(^|[^A-Za-z0-9_])return([^A-Za-z0-9_]|$)/)) next
      line = substr(line, RSTART)
    }
    stmt = stmt " " line
    if (index(stmt, ";") == 0) next
    stmt = substr(stmt, 1, index(stmt, ";"))
    # Innermost parentheses first: the arguments of a call go, a group stays.
    while (match(stmt, /\([^()]*\)/)) {
      before = substr(stmt, 1, RSTART - 1)
      inner = substr(stmt, RSTART + 1, RLENGTH - 2)
      after = substr(stmt, RSTART + RLENGTH)
      stmt = before (before ~ /[A-Za-z0-9_]$/ ? " CALL " : " " inner " ") after
    }
    while (gsub(/\[[^\[\]]*\]/, " ", stmt)) ;
    gsub(/-[ \t]*[0-9]+/, " ", stmt)
    gsub(/[^A-Za-z0-9_.]/, " ", stmt)
    n = split(stmt, tok, " ")
    for (i = 1; i <= n; i++) if (tok[i] ~ /^[0-9]+$/) print tok[i] + 0
    stmt = ""
  }' "$tool"/*.c | sort -un)
[ -n "$literal_numbers" ] || die "no return or _exit() statuses found in $tool/*.c"
statuses=$(printf '%s\n' "$ex_numbers" "$cli_numbers" "$literal_numbers" | sort -un)

# --- 2d. compare -----------------------------------------------------------------

synopsis=$(text_of SYNOPSIS)
options_text=$(tags_of OPTIONS)
for c in $commands; do
  has_word "redlock $c" <<<"$synopsis" || fail "command $c: not in SYNOPSIS"
  sub=$(text_of COMMANDS "$c")
  if [ -z "$sub" ]; then
    fail "command $c: no '.SS $c' subsection in COMMANDS"
    continue
  fi
  while read -r o; do
    has_word "--$o" <<<"$sub" || fail "command $c: option --$o not in its COMMANDS subsection"
  done < <(awk -v c="$c" '$1 == c { print $2 }' <<<"$command_options")
done
for o in $long_options; do
  has_word "--$o" <<<"$options_text" || fail "option --$o: no entry in OPTIONS"
done
for o in $short_options; do
  has_word "-$o" <<<"$options_text" || fail "option -$o: no entry in OPTIONS"
done

# EXIT STATUS entries: the number that starts each tag ("128 + N" is 128).
documented=$(tags_of "EXIT STATUS" | awk '$1 ~ /^[0-9]+$/ { print $1 + 0 }' | sort -un)
[ -n "$documented" ] || fail "EXIT STATUS: no numbered entries"
for s in $statuses; do
  grep -qx "$s" <<<"$documented" || fail "exit status $s: no entry in EXIT STATUS"
done
for s in $documented; do
  grep -qx "$s" <<<"$statuses" || fail "exit status $s: in EXIT STATUS, but $tool/ never returns it"
done

environment=$(grep -ohE '\b(getenv|setenv)\("[A-Z_][A-Z0-9_]*"' "$tool"/*.c | sed -E 's/.*"(.*)"/\1/' | sort -u)
[ -n "$environment" ] || die "no getenv/setenv variables found in $tool/*.c"
env_tags=$(tags_of ENVIRONMENT)
for v in $environment; do
  has_word "$v" <<<"$env_tags" || fail "variable $v: no entry in ENVIRONMENT"
done

if [ "$failed" -ne 0 ]; then
  echo "check-man: $page is out of date with $tool/ (see above)" >&2
  exit 1
fi
echo "check-man: $page: no groff warnings; documents commands ($(words "$commands")),"
echo "  options ($(words "$long_options" | sed -E 's/(^| )/\1--/g'); $(words "$short_options" | sed -E 's/(^| )/\1-/g')),"
echo "  exit statuses ($(words "$statuses")), variables ($(words "$environment"))"
