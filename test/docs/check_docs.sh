#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Documentation coverage: every public function has its page, every status
# and per-master outcome is in docs/errors.md, every config key is in
# docs/config.md and has a row in docs/cli.md's Configuration, and no page
# describes a function that is gone; a status docs/errors.md says `redlock`
# exits N for is named in docs/cli.md's exit status row for N
# (man/redlock.1 is generated from the same tables).
#
#   test/docs/check_docs.sh [SOURCE_DIR]
#
# What is documented is read from the sources themselves:
#   - functions: the REDLOCK_API declarations of include/redlock/redlock.h;
#   - statuses: the X(NAME, value, "message") rows of REDLOCK_STATUS_MAP;
#   - outcomes: the X(NAME, value, "name") rows of REDLOCK_MASTER_OUTCOME_MAP;
#   - config keys: the X(NAME, "key", ...) rows of REDLOCK_SETTING_MAP
#     (top-level integer keys), and the top-level and node key names of
#     src/config/config_yaml.c.
# Each extraction is checked against a count found independently, and
# against a minimum, so that a change of layout in the sources fails here
# instead of silently checking nothing. Exits 0 when complete, else 1 with
# every problem listed.
set -u

root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
header=$root/include/redlock/redlock.h
config_yaml=$root/src/config/config_yaml.c
api=$root/docs/api
errors_md=$root/docs/errors.md
config_md=$root/docs/config.md
cli_md=$root/docs/cli.md

problems=()
problem() { problems+=("$*"); }

for f in "$header" "$config_yaml" "$errors_md" "$config_md" "$cli_md" \
         "$api/README.md"; do
    [ -f "$f" ] || problem "missing file: ${f#"$root"/}"
done
if [ ${#problems[@]} -gt 0 ]; then
    printf 'docs coverage: %s\n' "${problems[@]}"
    exit 1
fi

# Collapse whitespace, and none just inside parentheses: a declaration
# compares equal however its lines are broken.
normalize() { tr -s ' \t\n' '   ' | sed -e 's/( /(/g' -e 's/ )/)/g' -e 's/^ //' -e 's/ $//'; }

# --- Extraction ----------------------------------------------------------

# Public declarations: from a line with REDLOCK_API (not a #define) to the
# line closing it with ");". One per line of output, whitespace collapsed.
declarations=$(awk '
    /^[ \t]*#/ { next }
    /REDLOCK_API/ { collecting = 1; text = "" }
    collecting { text = text " " $0; if ($0 ~ /\);/) { print text; collecting = 0 } }
' "$header" | while IFS= read -r line; do printf '%s\n' "$line" | normalize; echo; done |
    sed '/^$/d')
functions=$(printf '%s\n' "$declarations" | sed -n 's/^.*[ *]\(redlock_[a-z0-9_]*\)(.*$/\1/p')
n_functions=$(printf '%s\n' "$functions" | sed '/^$/d' | wc -l)
n_api_words=$(grep -v '^[ \t]*#' "$header" | grep -o 'REDLOCK_API' | wc -l)

# Statuses: the rows of the X-macro, from its #define to its last
# continued line.
status_rows=$(awk '
    /^#define REDLOCK_STATUS_MAP\(X\)/ { inside = 1; next }
    inside { print; if ($0 !~ /\\[ \t]*$/) inside = 0 }
' "$header")
statuses=$(printf '%s\n' "$status_rows" |
    sed -n 's/^[ \t]*X(\([A-Z0-9_]*\), *\(-\{0,1\}[0-9]*\), *"\(.*\)")[ \t]*\\\{0,1\}[ \t]*$/\1|\2|\3/p')
n_statuses=$(printf '%s\n' "$statuses" | sed '/^$/d' | wc -l)
n_status_rows=$(printf '%s\n' "$status_rows" | grep -c 'X(')

# The rows of an X-macro of the header: from its #define to its last
# continued line.
map_rows() {
    awk -v map="$1" '
        $0 ~ "^#define " map "\\(X\\)" { inside = 1; next }
        inside { print; if ($0 !~ /\\[ \t]*$/) inside = 0 }
    ' "$header"
}

# Per-master outcomes: REDLOCK_MASTER_ and the NAME of each row.
outcome_rows=$(map_rows REDLOCK_MASTER_OUTCOME_MAP)
outcomes=$(printf '%s\n' "$outcome_rows" |
    sed -n 's/^[ \t]*X(\([A-Z_]*\), *[0-9]*, *"[a-z-]*").*/REDLOCK_MASTER_\1/p')
n_outcomes=$(printf '%s\n' "$outcomes" | sed '/^$/d' | wc -l)
n_outcome_rows=$(printf '%s\n' "$outcome_rows" | grep -c 'X(')

# Config keys. Top-level integer settings: the keys of REDLOCK_SETTING_MAP.
setting_rows=$(map_rows REDLOCK_SETTING_MAP)
setting_keys=$(printf '%s\n' "$setting_rows" |
    sed -n 's/^[ \t]*X([A-Z_]*, *"\([a-z_]*\)",.*/\1/p')
n_setting_keys=$(printf '%s\n' "$setting_keys" | sed '/^$/d' | wc -l)
setting_count=$(printf '%s\n' "$setting_rows" | grep -c 'X(')
# The other top-level keys: names[TOP_...] = "..." in config_yaml.c.
top_keys=$(sed -n 's/^[ \t]*names\[TOP_[A-Z_]*\] = "\([a-z_]*\)";.*/\1/p' "$config_yaml")
n_top_keys=$(printf '%s\n' "$top_keys" | sed '/^$/d' | wc -l)
n_top_enum=$(sed -n 's/^enum { *\(TOP_[A-Z_]* = RL_SETTING_COUNT.*\)TOP_KEY_COUNT *};.*/\1/p' \
    "$config_yaml" | grep -o 'TOP_[A-Z_]*' | wc -l)
# Node keys: node_key_names, one per member of enum node_key but NK_COUNT.
node_keys=$(awk '
    /node_key_names\[NK_COUNT\] = \{/ { inside = 1; next }
    inside && /^\};/ { inside = 0 }
    inside
' "$config_yaml" | sed -n 's/^[ \t]*\[NK_[A-Z_]*\] = "\([a-z_]*\)",.*/\1/p')
n_node_keys=$(printf '%s\n' "$node_keys" | sed '/^$/d' | wc -l)
n_node_enum=$(awk '
    /^enum node_key \{/ { inside = 1; next }
    inside && /^\};/ { inside = 0 }
    inside
' "$config_yaml" | grep -o 'NK_[A-Z_]*' | grep -vc '^NK_COUNT$')

# --- Sanity of the extraction --------------------------------------------

sane() { # what found expected minimum
    if [ "$2" -lt "$4" ]; then
        problem "extraction: found $2 $1, fewer than the minimum of $4: has the layout of the sources changed?"
    elif [ "$2" -ne "$3" ]; then
        problem "extraction: found $2 $1 where the sources have $3: has the layout of the sources changed?"
    fi
}
min_functions=40
sane "public functions in include/redlock/redlock.h" "$n_functions" "$n_api_words" "$min_functions"
sane "statuses in REDLOCK_STATUS_MAP" "$n_statuses" "$n_status_rows" 10
sane "per-master outcomes in REDLOCK_MASTER_OUTCOME_MAP" "$n_outcomes" "$n_outcome_rows" 5
sane "setting keys in REDLOCK_SETTING_MAP" "$n_setting_keys" "${setting_count:-0}" 5
sane "top-level keys in src/config/config_yaml.c" "$n_top_keys" "$n_top_enum" 2
sane "node keys in src/config/config_yaml.c" "$n_node_keys" "$n_node_enum" 5

# --- Function pages ------------------------------------------------------

sections=("## Name" "## Synopsis" "## Description" "## Ownership" "## Threading" "## Example"
          "## Return value and errors")
# Texts are read once and matched by the shell itself: a grep per check
# (over a thousand) took most of this script's 20 s of CPU. A line is
# matched as "\n" LINE "\n" in "\n" TEXT "\n".
nl=$'\n'
readme_text=$(<"$api/README.md")
while IFS= read -r decl; do
    [ -n "$decl" ] || continue
    fn=""
    [[ $decl =~ ^.*[\ *](redlock_[a-z0-9_]*)\( ]] && fn=${BASH_REMATCH[1]}
    page=$api/$fn.md
    if [ ! -f "$page" ]; then
        problem "no page for public function $fn: docs/api/$fn.md"
        continue
    fi
    text="$nl$(<"$page")$nl"
    for s in "${sections[@]}"; do
        [[ $text == *"$nl$s$nl"* ]] || problem "docs/api/$fn.md: no \"$s\" section"
    done
    [[ $text == *"#include <redlock/redlock.h>"* ]] ||
        problem "docs/api/$fn.md: the synopsis does not #include <redlock/redlock.h>"
    if [[ $(normalize <"$page") != *"$decl"* ]]; then
        problem "docs/api/$fn.md: the synopsis is not the header's declaration: $decl"
    fi
    [[ $readme_text == *"($fn.md)"* ]] || problem "docs/api/README.md: no link to $fn.md"
done <<<"$declarations"

# Pages for functions that are not (any more) in the header; not when the
# extraction found too few functions, which would flag every page.
for page in "$api"/*.md; do
    [ "$n_functions" -ge "$min_functions" ] || break
    [ -e "$page" ] || continue
    name=${page##*/}
    name=${name%.md}
    case $name in README | types) continue ;; esac
    [[ "$nl$functions$nl" == *"$nl$name$nl"* ]] ||
        problem "docs/api/$name.md documents $name, which include/redlock/redlock.h does not declare"
done

# --- Statuses and outcomes -----------------------------------------------

errors_text=$(<"$errors_md")
while IFS='|' read -r name value message; do
    [ -n "$name" ] || continue
    [[ $errors_text == *"\`REDLOCK_$name\` ($value)"* ]] ||
        problem "docs/errors.md: no heading for REDLOCK_$name with its value: \`REDLOCK_$name\` ($value)"
    [[ $errors_text == *"$message"* ]] ||
        problem "docs/errors.md: REDLOCK_$name's message is not quoted: \"$message\""
done <<<"$statuses"
while IFS= read -r name; do
    [ -n "$name" ] || continue
    [[ $errors_text == *"\`$name\`"* ]] || problem "docs/errors.md: per-master outcome $name is missing"
done <<<"$outcomes"

# A status's exit status, as docs/errors.md gives it ("`redlock` exits N"
# in its section), is where docs/cli.md's table of exit statuses names it.
exits=$(awk '/^## `REDLOCK_[A-Z]*`/ { name = $2; gsub("`", "", name) }
             name != "" && match($0, /`redlock` exits [0-9]+/) {
                 n = substr($0, RSTART, RLENGTH); sub(/.* /, "", n); print name, n }' "$errors_md")
[ -n "$exits" ] || problem "docs/errors.md: no status says which exit status \`redlock\` gives"
while read -r name code; do
    [ -n "$name" ] || continue
    row=$(grep -E "^\| \`$code\` \|" "$cli_md")
    [ -n "$row" ] || { problem "docs/cli.md: no exit status row for $code ($name)"; continue; }
    grep -qF "\`$name\`" <<<"$row" ||
        problem "docs/cli.md: exit status $code does not name $name, which docs/errors.md says exits $code"
done <<<"$exits"

# --- Config keys ---------------------------------------------------------

# A key's row: a line that starts "| `KEY` |" (in docs/cli.md also
# "| `KEY`, ..."), spaces allowed around the name.
config_text="$nl$(<"$config_md")$nl"
cli_config="$nl$(awk '/^## / { on = ($0 == "## Configuration") } on' "$cli_md")$nl"
while IFS= read -r key; do
    [ -n "$key" ] || continue
    row_start="$nl\\| *\`$key\`"
    [[ $config_text =~ $row_start\ *\| ]] ||
        problem "docs/config.md: config key $key has no row in a key table"
    # docs/cli.md (and so man/redlock.1, from the same tables) lists every
    # key in its Configuration section, each on a row of its own.
    [[ $cli_config =~ $row_start(\ *\||,) ]] ||
        problem "docs/cli.md: config key $key has no row in the Configuration section"
done <<<"$(printf '%s\n%s\n%s\n' "$setting_keys" "$top_keys" "$node_keys")"

# --- Verdict -------------------------------------------------------------

if [ ${#problems[@]} -gt 0 ]; then
    echo "docs coverage: ${#problems[@]} problem(s):"
    printf '  - %s\n' "${problems[@]}"
    exit 1
fi
echo "docs coverage: $n_functions functions, $n_statuses statuses, $n_outcomes outcomes," \
     "$((n_setting_keys + n_top_keys + n_node_keys)) config keys: all documented"
