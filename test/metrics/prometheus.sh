#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A real Prometheus scrapes examples/stats_exporter: three local masters
# (scripts/masters.sh), the exporter serving GET /metrics on loopback, and
# a prometheus of our own (temporary config and storage, 1 s scrapes) on a
# free loopback port. Passes when a query through its HTTP API finds
# redlock_master_up 1 for every master, the acquires counted, and the
# state gauges without churn; promtool checks the exposition served and
# one written by `redlock run --metrics-file`. Fails (never skips) when
# prometheus or promtool is missing: scripts/deps.sh installs them.
#
#   test/metrics/prometheus.sh STATS_EXPORTER REDLOCK_TOOL
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
exporter=${1:?usage: prometheus.sh STATS_EXPORTER REDLOCK_TOOL}
tool=${2:?usage: prometheus.sh STATS_EXPORTER REDLOCK_TOOL}
fail() { echo "FAIL: $*" >&2; exit 1; }
for t in prometheus promtool redis-server; do
    command -v "$t" >/dev/null || fail "$t not found (Debian: scripts/deps.sh installs it)"
done

work=$(mktemp -d)
export REDLOCK_MASTERS_DIR=$work/masters REDLOCK_MASTERS_PORT=0
exporter_pid='' prometheus_pid=''
cleanup() {
    for pid in $exporter_pid $prometheus_pid; do
        kill "$pid" 2>/dev/null
    done
    for pid in $exporter_pid $prometheus_pid; do
        # Bounded: SIGKILL what has not gone after 5 s.
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    timeout 20 "$root/scripts/masters.sh" stop >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# GET http://127.0.0.1:$1$2: the body on stdout; fails on no connection.
http_get() {
    local response
    { exec 3<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
    printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&3
    response=$(timeout 5 cat <&3)
    exec 3<&-
    [[ $response == "HTTP/1."?" 200"* ]] || return 1
    printf '%s\n' "${response#*$'\r\n\r\n'}"
}
# A loopback port nothing listens on, below the range of ephemeral ports
# (which connections use without listening). Another process may take it
# before ours binds: starting a server is tried again on another port.
low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
free_port() {
    local p
    for _ in $(seq 100); do
        p=$((10000 + RANDOM % (low - 10000)))
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
    done
    return 1
}
# wait_for SECONDS CMD...: CMD every 0.2 s until it succeeds, at most SECONDS.
wait_for() {
    local seconds=$1
    shift
    for _ in $(seq $((seconds * 5))); do
        "$@" && return 0
        sleep 0.2
    done
    return 1
}

config=$(timeout 30 "$root/scripts/masters.sh" start 3) || fail "scripts/masters.sh start 3 exited $?"
masters=3

# The exporter, holding its demo lock.
exposition() { http_get "$eport" /metrics >"$work/metrics.txt"; }
served_or_gone() { exposition || ! kill -0 "$exporter_pid" 2>/dev/null; }
for attempt in 1 2 3; do
    eport=$(free_port) || fail "no free port"
    "$exporter" "$config" "127.0.0.1:$eport" 2>"$work/exporter.log" &
    exporter_pid=$!
    wait_for 10 served_or_gone || fail "the exporter does not serve /metrics: $(cat "$work/exporter.log")"
    kill -0 "$exporter_pid" 2>/dev/null && break
    wait "$exporter_pid"
    exporter_pid=''
    grep -q 'in use' "$work/exporter.log" && [ "$attempt" -lt 3 ] ||
        fail "the exporter exited: $(cat "$work/exporter.log")"
done
promtool check metrics <"$work/metrics.txt" || fail "promtool check metrics on the exposition served"

# Our own prometheus, scraping it every second. Ready: its storage opened
# and its API up (slow under load, so a bound of its own).
ready_or_gone() { http_get "$pport" /-/ready >/dev/null || ! kill -0 "$prometheus_pid" 2>/dev/null; }
cat >"$work/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: redlock
    static_configs:
      - targets: ['127.0.0.1:$eport']
YAML
for attempt in 1 2 3; do
    pport=$(free_port) || fail "no free port"
    prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data.$attempt" \
        --web.listen-address="127.0.0.1:$pport" --log.level=warn 2>"$work/prometheus.log" &
    prometheus_pid=$!
    wait_for 30 ready_or_gone || fail "prometheus not ready after 30 s: $(tail -5 "$work/prometheus.log")"
    kill -0 "$prometheus_pid" 2>/dev/null && break
    wait "$prometheus_pid"
    prometheus_pid=''
    grep -q 'address already in use' "$work/prometheus.log" && [ "$attempt" -lt 3 ] ||
        fail "prometheus exited: $(tail -5 "$work/prometheus.log")"
done

# query EXPR: the API's JSON answer into $work/answer.json.
query() {
    http_get "$pport" "/api/v1/query?query=$1" >"$work/answer.json" &&
        grep -q '"status":"success"' "$work/answer.json"
}
# How many series of the answer have the value $1.
series_with() { grep -o "\"value\":\[[0-9.]*,\"$1\"\]" "$work/answer.json" | wc -l; }
every_master_up() {
    query redlock_master_up && [ "$(series_with 1)" -eq "$masters" ] &&
        [ "$(grep -o '"master":"127.0.0.1:[0-9]*"' "$work/answer.json" | sort -u | wc -l)" -eq "$masters" ]
}
wait_for 15 every_master_up ||
    fail "redlock_master_up is not 1 for each of $masters masters: $(cat "$work/answer.json" 2>/dev/null)
prometheus log: $(tail -5 "$work/prometheus.log")"
query 'redlock_acquires_total%7Bstatus%3D%22ok%22%7D%3E0' && [ "$(series_with 1)" -eq 1 ] ||
    fail "redlock_acquires_total{status=\"ok\"} is not above 0: $(cat "$work/answer.json")"
# One series per master and state, whatever the state: none comes and goes.
query 'count(redlock_master_state)' && [ "$(series_with $((masters * 4)))" -eq 1 ] ||
    fail "count(redlock_master_state) is not $((masters * 4)): $(cat "$work/answer.json")"
query 'sum(redlock_master_state%7Bstate%3D%22ready%22%7D)' && [ "$(series_with "$masters")" -eq 1 ] ||
    fail "not every master ready in redlock_master_state: $(cat "$work/answer.json")"

# redlock run --metrics-file: a textfile node_exporter reads, as promtool does.
REDLOCK_CONFIG=$config "$tool" run --metrics-file "$work/redlock.prom" metrics-test -- true ||
    fail "redlock run --metrics-file exited $?"
promtool check metrics <"$work/redlock.prom" || fail "promtool check metrics on --metrics-file's output"
grep -q '^redlock_releases_total 1$' "$work/redlock.prom" ||
    fail "--metrics-file's last version does not count the release: $(grep releases "$work/redlock.prom")"
ls -A "$work" | grep -q '^\.redlock\.prom\.' && fail "a temporary file left beside --metrics-file"
echo "prometheus: redlock_master_up 1 for $masters masters, acquires counted; promtool finds both expositions clean"
exit 0
