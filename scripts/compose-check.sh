#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Check the docker compose failover drill without running it (no Docker
# engine needed, nothing installed):
#   - docker-compose.yml is a valid compose file (`docker-compose config -q`;
#     the `docker compose` plugin is used when docker-compose is missing);
#   - every master redis1 .. redis5 runs redis:7 with appendonly yes and
#     appendfsync always, a `redis-cli ping` healthcheck, restart "no", its
#     own volume on /data, and no replication;
#   - the client waits for all five to be healthy and runs the failover
#     program with config/docker.yaml;
#   - config/docker.yaml names exactly those five masters on port 6379, and
#     loads with the library's loader (with the redlock binary: the one given
#     as argument, else build/redlock when built, else this step is skipped).
#
# Usage: scripts/compose-check.sh [PATH-TO-REDLOCK-BINARY]
# Exits 0 when everything holds, 1 (after listing every problem) otherwise.
set -euo pipefail

if [ $# -gt 1 ]; then
  echo "usage: $0 [PATH-TO-REDLOCK-BINARY]" >&2
  exit 1
fi
# The binary's path as given, made absolute before the cd below.
redlock_bin=${1:-}
case $redlock_bin in
  "" | /*) ;;
  *) redlock_bin=$PWD/$redlock_bin ;;
esac
cd "$(dirname "$0")/.."

compose_file=docker-compose.yml
drill_config=config/docker.yaml
masters=(redis1 redis2 redis3 redis4 redis5)

problems=0
problem() { echo "compose-check: $*" >&2; problems=$((problems + 1)); }
die() { echo "compose-check: $*" >&2; exit 1; }

# --- The compose file ------------------------------------------------------

if command -v docker-compose >/dev/null 2>&1; then
  compose=(docker-compose)
elif docker compose version >/dev/null 2>&1; then
  compose=(docker compose)
else
  die "docker-compose not found (Debian package docker-compose; scripts/deps.sh installs it)"
fi
[ -f "$compose_file" ] || die "$compose_file not found"

if ! "${compose[@]}" -f "$compose_file" config -q; then
  die "$compose_file: '${compose[*]} config' rejects it (see above)"
fi

# The file as compose understands it (anchors merged, variables substituted,
# one canonical layout), flattened to one line per value:
#   SERVICE <tab> dotted.key.path <tab> value
# e.g. "redis1	command	--appendonly", "client	depends_on.redis1.condition
# service_healthy". Items of a list share the list's path. Both the v1 layout
# (list items at their key's indentation) and the v2 one (indented) are read.
normalized=$("${compose[@]}" -f "$compose_file" config) \
  || die "$compose_file: '${compose[*]} config' failed"
flat=$(awk '
  function unquote(v) {
    if (v ~ /^\047.*\047$/) { v = substr(v, 2, length(v) - 2); gsub(/\047\047/, "\047", v) }
    else if (v ~ /^".*"$/) { v = substr(v, 2, length(v) - 2); gsub(/\\"/, "\"", v) }
    return v
  }
  function keypath(   p, i) {
    p = ""
    for (i = 2; i <= depth; i++)
      if (key[i] != "") p = p (p == "" ? "" : ".") key[i]
    return p
  }
  function emit(path, value) { print key[1] "\t" path "\t" unquote(value) }
  /^[^ ]/ { in_services = ($0 ~ /^services:[ ]*$/); depth = 0; next }
  !in_services || /^[ ]*(#.*)?$/ { next }
  {
    match($0, /^ */); n = RLENGTH; rest = substr($0, n + 1)
    item = (rest ~ /^-( |$)/)
    # Leave the keys this line is not under. A list item at its key'\''s own
    # indentation (v1 layout) stays under that key.
    while (depth > 0 && (indent[depth] > n || (indent[depth] == n && !(item && opens[depth]))))
      depth--
    if (item) {
      rest = substr(rest, 3); n += 2
      if (rest !~ /^[^ :]+:( |$)/) { emit(keypath(), rest); next }
      # A mapping in a list: its keys belong to the list'\''s path.
      depth++; key[depth] = ""; indent[depth] = n - 2; opens[depth] = 0
    }
    k = rest; sub(/:( .*)?$/, "", k)
    v = rest; sub(/^[^ :]+:[ ]?/, "", v)
    depth++; key[depth] = unquote(k); indent[depth] = n; opens[depth] = (v == "")
    if (v != "") emit(keypath(), v)
  }
' <<<"$normalized")

values() { awk -F '\t' -v s="$1" -v p="$2" '$1 == s && $2 == p { print $3 }' <<<"$flat"; }
joined() { values "$1" "$2" | paste -sd ' ' -; }
oneline() { paste -sd ' ' - <<<"$1"; }

services=$(cut -f1 <<<"$flat" | sort -u)
compose_masters=$(grep -E '^redis[0-9]+$' <<<"$services" | sort -V || true)
if [ "$compose_masters" != "$(printf '%s\n' "${masters[@]}")" ]; then
  problem "$compose_file: the masters should be exactly ${masters[*]}, found: $(oneline "$compose_masters")"
fi

for m in "${masters[@]}"; do
  grep -qx "$m" <<<"$services" || continue
  where="$compose_file: service $m"

  image=$(joined "$m" image)
  [[ $image == redis:7* ]] || problem "$where: image should be the official redis:7, not '${image}'"

  # The Redlock persistence rule: a master that crashes must not forget a
  # key before it expires.
  cmd=" $(joined "$m" command) "
  [[ $cmd == *" --appendonly yes "* ]] || problem "$where: command lacks --appendonly yes"
  [[ $cmd == *" --appendfsync always "* ]] || problem "$where: command lacks --appendfsync always"
  if [[ $cmd == *replicaof* || $cmd == *slaveof* ]]; then
    problem "$where: replicates another master; Redlock needs independent masters"
  fi

  test_cmd=$(joined "$m" healthcheck.test)
  if [ -z "$test_cmd" ]; then
    problem "$where: no healthcheck"
  elif [[ $test_cmd != *redis-cli*ping* ]]; then
    problem "$where: the healthcheck should run 'redis-cli ping', not '$test_cmd'"
  fi
  [ "$(joined "$m" healthcheck.disable)" != true ] || problem "$where: healthcheck disabled"

  restart=$(joined "$m" restart)
  [ "$restart" = no ] || problem "$where: restart should be \"no\" (got '${restart:-unset}')"

  if ! values "$m" volumes | grep -Eq ':/data(:|$)' && ! values "$m" volumes.target | grep -qx /data; then
    problem "$where: no volume on /data (the AOF would not outlive the container)"
  fi
done

if grep -qx client <<<"$services"; then
  for m in "${masters[@]}"; do
    [ "$(joined client "depends_on.$m.condition")" = service_healthy ] \
      || problem "$compose_file: service client should depend on $m with condition: service_healthy"
  done
  client_cmd=" $(joined client command) "
  [[ $client_cmd == *"/redlock-failover --config $drill_config --seconds 0 "* ]] \
    || problem "$compose_file: service client should run redlock-failover --config $drill_config --seconds 0"
else
  problem "$compose_file: no client service"
fi

# --- The drill's redlock config ------------------------------------------------

if [ ! -f "$drill_config" ]; then
  problem "$drill_config not found"
else
  # The masters it names (comments aside) must be the compose services.
  hosts=$(sed -n -E 's/^[[:space:]]*(-[[:space:]]+)?host:[[:space:]]*([^[:space:]#]+).*/\2/p' "$drill_config" \
          | tr -d "\"'" | sort -V)
  if [ "$hosts" != "$(printf '%s\n' "${masters[@]}")" ]; then
    problem "$drill_config: the nodes should be exactly ${masters[*]}, found: $(oneline "$hosts")"
  fi
  bad_ports=$(sed -n -E 's/^[[:space:]]*(-[[:space:]]+)?port:[[:space:]]*([^[:space:]#]+).*/\2/p' "$drill_config" \
              | tr -d "\"'" | grep -vx 6379 || true)
  [ -z "$bad_ports" ] || problem "$drill_config: every node should use port 6379 (found: $(oneline "$bad_ports"))"

  # Load it with the library's loader, through the redlock tool. --node
  # replaces the masters only after the whole file was loaded and checked, so
  # `ping` then reaches no server and needs no DNS: 69 (no quorum) means the
  # file loaded, 78 means it did not.
  if [ -z "$redlock_bin" ] && [ -x build/redlock ]; then
    redlock_bin=build/redlock
  fi
  if [ -z "$redlock_bin" ]; then
    echo "compose-check: note: build/redlock not built, $drill_config not loaded (give the binary as argument)"
  elif [ ! -x "$redlock_bin" ] || [ -d "$redlock_bin" ]; then
    problem "$redlock_bin: not an executable"
  else
    status=0
    out=$("$redlock_bin" -c "$drill_config" --node unix:/nonexistent/compose-check.sock ping 2>&1) || status=$?
    case $status in
      69) ;;
      78) problem "$drill_config does not load: $(grep '^redlock:' <<<"$out" | head -n 1)" ;;
      *)  problem "$redlock_bin -c $drill_config ping: unexpected exit status $status: $out" ;;
    esac
  fi
fi

if [ "$problems" -gt 0 ]; then
  echo "compose-check: $problems problem(s) found" >&2
  exit 1
fi
echo "compose-check: ok (${compose[*]}: $compose_file, $drill_config)"
