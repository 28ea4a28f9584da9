/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The commands and their options (cli_command.h), with every word --help and
 * the manual say about them: the synopses, --help and the COMMANDS and
 * OPTIONS of redlock(1) and docs/cli.md are made from these rows. The
 * words are markup (markup.h); the manual's other sections are in
 * manual.c.
 */
#include "cli_command.h"

#include <string.h>

/* ---- redlock's own options ------------------------------------------------ */

static const cli_option opt_config = {
    .name = "config",
    .short_name = 'c',
    .value = "FILE",
    .apply = cli_opt_config,
    .help = "YAML configuration (else `$REDLOCK_CONFIG`, else "
            "`~/.config/redlock/redlock.yaml`, `/etc/redlock/redlock.yaml`)",
    .details = "Masters, timeouts and lock defaults; see [Configuration](#configuration) for "
               "where `redlock` looks without it, and for what the file holds.",
};

static const cli_option opt_node = {
    .name = "node",
    .short_name = 'n',
    .value = "MASTER",
    .flags = CLI_OPT_REPEATABLE,
    .apply = cli_opt_node,
    .help = "a master (repeatable); replaces the config's masters. *MASTER* is "
            "`HOST[:PORT]`, `[IPV6][:PORT]`, `unix:/PATH`, "
            "`redis://[USER[:PASSWORD]@]HOST[:PORT][/DB]`, `rediss://...` (TLS) or "
            "`unix:///PATH[?db=N]`.",
    .details = "Repeat it for each master, at most 64 times. The configuration keeps its "
               "other settings (see [Configuration](#configuration)), its `tls_*` keys "
               "included, which `rediss://` masters use. Without a port, 6379; "
               "a bare IPv6 address is a *HOST* too. A password is safer in "
               "`REDLOCK_PASSWORD` than in a URI (see [Environment](#environment)).",
};

static const cli_option opt_verbose = {
    .name = "verbose",
    .short_name = 'v',
    .flags = CLI_OPT_REPEATABLE,
    .apply = cli_opt_verbose,
    .help = "show warnings (`-vv`: also each acquire, release and connection, `-vvv`: "
            "debug, extensions included), each line with its UTC time and level",
    .details = "They are the library's messages (a master unreachable, reconnects, each "
               "acquire, extension, release and lost lock with its resource), on standard "
               "error, as `redlock: 2026-11-26T12:40:01.123Z info: acquire job: success ...`; "
               "by default only errors are shown.",
};

static const cli_option opt_quiet = {
    .name = "quiet",
    .short_name = 'q',
    .apply = cli_opt_quiet,
    .help = "say nothing when the lock is held by another holder (the exit status "
            "says it), as `flock -n`",
    .details = "For `run` and `acquire` from cron, where every machine but one loses a "
               "`--wait 0` race: only the message that the lock is held (or was still held "
               "when `--wait` ran out) is left out; every other error is still shown.",
};

static const cli_option opt_tool_help = {
    .name = "help",
    .short_name = 'h',
    .flags = CLI_OPT_ALONE | CLI_OPT_HELP,
    .help = "print this help (*COMMAND* `--help`: a command's)",
    .details = "It sums up the commands, options, environment variables and exit statuses; "
               "`redlock` then exits 0.",
};

static const cli_option opt_version = {
    .name = "version",
    .short_name = 'V',
    .flags = CLI_OPT_ALONE,
    .apply = cli_opt_version,
    .help = "print the version",
    .details = "The library's, which the tool comes with; `redlock` then exits 0.",
};

/* ---- Options of the commands ------------------------------------------------ */

static const cli_option opt_ttl = {
    .name = "ttl",
    .short_name = 't',
    .value = "TIME",
    .apply = cli_opt_ttl,
    .help = "the lock's time-to-live (default: the config's `ttl_ms`)",
    .details = "`ttl_ms` is 10000 unless the configuration sets it. It must be "
               "at least 1 ms once rounded (see [Time values](#time-values)).",
};

static const cli_option opt_wait = {
    .name = "wait",
    .short_name = 'w',
    .value = "TIME",
    .apply = cli_opt_wait,
    .help = "retry until *TIME* has passed (`0`: one attempt; `forever`: until acquired or "
            "interrupted; default: the config's retry policy)",
    .details = "Retries follow the configuration's `retry_delay_ms` and `retry_jitter_ms`, "
               "as long as a retry would start within *TIME* of the first attempt; "
               "`forever` (or `inf`) retries until the lock is acquired or a signal comes "
               "(see [Time values](#time-values)). Without `--wait`, the configuration's "
               "`retry_count` retries are made.",
};

static const cli_option opt_conflict_exit = {
    .name = "conflict-exit-code",
    .short_name = 'E',
    .value = "N",
    .apply = cli_opt_conflict_exit,
    .help = "exit *N* instead of 75 when held",
    .details = "*N* is 0 to 255, as with `flock -E`; every other exit status stays.",
};

static const cli_option opt_kill_after = {
    .name = "kill-after",
    .value = "TIME",
    .apply = cli_opt_kill_after,
    .help = "SIGKILL what is left this long after SIGTERM (default: half the validity left "
            "when SIGTERM was sent)",
    .details = "SIGTERM goes to every process *CMD* started once the lock is lost, or once "
               "*CMD* has exited leaving processes running (see [Signals](#signals)). It may "
               "be 0.",
};

static const cli_option opt_max_hold = {
    .name = "max-hold",
    .value = "TIME",
    .apply = cli_opt_max_hold,
    .help = "stop extending once the lock has been held this long (default: the config's "
            "max_hold_ms, 0 for no cap)",
    .details = "When the cap is reached, *CMD* and every process it started are stopped as "
               "when the lock is lost; once they are all gone, `redlock` releases the lock, "
               "so that it is free at once rather than after the TTL of the last extension, "
               "and exits 80 with a message naming the cap.",
};

static const cli_option opt_lock_delay = {
    .name = "lock-delay",
    .value = "TIME",
    .apply = cli_opt_lock_delay,
    .help = "keep the keys this much longer than the validity (default: the config's "
            "lock_delay_ms, 0)",
    .details = "A holder that dies without releasing (a crash, a partition) keeps the lock "
               "taken for the TTL plus *TIME*; a release frees it at once. `extend` keeps "
               "the keys' delay: give it the same *TIME* (or set `lock_delay_ms` in the "
               "config).",
};

static const cli_option opt_owner = {
    .name = "owner",
    .value = "TOKEN",
    .apply = cli_opt_owner,
    .help = "take the lock reentrantly for *TOKEN*: while it is held for *TOKEN*, a `run` or "
            "`acquire` with the same *TOKEN* gets it at once, as another hold",
    .details = "Each hold has its own value and is released (or extended) on its own; the "
               "lock is freed with the last hold. A `run` or `acquire` without `--owner`, or "
               "with another *TOKEN*, finds the lock held. The same *TOKEN* re-enters: never "
               "share one between independent workers, which would hold the lock together. "
               "*TOKEN* is 1 to 1024 bytes; see [Reentrant locks](#reentrant-locks).",
};

static const cli_option opt_label = {
    .name = "label",
    .value = "TEXT",
    .apply = cli_opt_label,
    .help = "record *TEXT* as the lock's holder label, which `status` shows",
    .details = "Beside this host's name, the process id and the time, in the lock's value "
               "(see `status`). *TEXT* is 1 to 128 printable ASCII characters; anyone who can "
               "read the masters' keys or run `status` sees it, so never put a secret in it. "
               "`run` labels with *CMD*'s name (not its arguments) unless given one; "
               "`acquire` records no holder without it.",
};

static const cli_option opt_no_fencing = {
    .name = "no-fencing",
    .apply = cli_opt_no_fencing,
    .help = "lock without a fencing token (one round trip less)",
    .details = "By default `run` takes the lock with a fencing token and gives it to *CMD* in "
               "`REDLOCK_FENCING_TOKEN`; this needs the masters' fencing counters in use (see "
               "`fencing-init`).",
};

static const cli_option opt_fencing = {
    .name = "fencing",
    .apply = cli_opt_fencing,
    .help = "take the lock with a fencing token (default: the config's fencing, false)",
    .details = "The token is in the `--json` output's `fencing_token`. It needs the masters' "
               "fencing counters in use (see `fencing-init`).",
};

static const cli_option opt_slots = {
    .name = "slots",
    .value = "K",
    .apply = cli_opt_slots,
    .help = "take one of *K* slots of *RESOURCE*: at most *K* holders at once (a counting "
            "semaphore)",
    .details = "Each slot is a lock of its own key, *RESOURCE*`:slot:`*i*; the slots are "
               "tried in turn and the first free one is taken (`REDLOCK_RESOURCE` names it). "
               "*K* is 1 to 64 (1: the lock itself); every user of *RESOURCE* must give the "
               "same *K*. One *RESOURCE* only, without `--owner`. See "
               "[Semaphores](#semaphores).",
};

static const cli_option opt_json = {
    .name = "json",
    .apply = cli_opt_json,
    .help = "print a JSON object instead",
    .details = "One object, on a single line, on success and failure alike (the examples "
               "in [Commands](#commands) are wrapped to fit the page); see "
               "[JSON output](#json-output).",
};

static const cli_option opt_metrics_file = {
    .name = "metrics-file",
    .value = "PATH",
    .apply = cli_opt_metrics_file,
    .help = "write the client's metrics to *PATH* in the Prometheus text format, every 5 s "
            "while *CMD* runs and once more at the end",
    .details = "For node_exporter's textfile collector: name *PATH* `*.prom` in its "
               "directory. Each version is written to a temporary file beside *PATH* "
               "(`.NAME.XXXXXX`) and renamed over it, so a scrape never reads half a file. "
               "The first is written once the acquire is decided, the last after the "
               "release. A write that fails is reported, once for each "
               "reason, and the run goes on. The metrics are those of "
               "`redlock_stats_format_prometheus()` (see docs/operations.md).",
};

static const cli_option opt_command_help = {
    .name = "help",
    .short_name = 'h',
    .flags = CLI_OPT_ALONE | CLI_OPT_HELP,
    .help = "print this help",
    .details = "In `run`, only before the first *RESOURCE*: after it, `--help` is *CMD*'s.",
};

/* ---- Commands ----------------------------------------------------------------- */

static const cli_option *const run_options[] = {
    &opt_ttl,      &opt_wait,       &opt_conflict_exit, &opt_kill_after,
    &opt_max_hold, &opt_lock_delay, &opt_owner,         &opt_label,
    &opt_no_fencing, &opt_slots, &opt_metrics_file, &opt_command_help};

static const cli_command command_run = {
    .name = "run",
    .options = run_options,
    .option_count = ARRAY_SIZE(run_options),
    .operands = "*RESOURCE*... [`--`] *CMD* [*ARG*...]",
    .operand_count = CLI_OPERANDS_CHECKED,
    .options_first = true,
    .run = cmd_run,
    .brief = "run *CMD* while holding the lock",
    .summary =
        "Acquire one lock on every *RESOURCE*, run *CMD* while holding it (extended\n"
        "every ttl/3) and release it when *CMD* exits. The exit status is *CMD*'s.\n"
        "*CMD*'s environment gets `REDLOCK_RESOURCE`, `REDLOCK_VALUE`,\n"
        "`REDLOCK_VALIDITY_MS` and `REDLOCK_FENCING_TOKEN` (unless `--no-fencing`): the\n"
        "lock's fencing token, to pass with every write to what the lock protects.\n"
        "With `--`, every operand before it is a *RESOURCE* (at\n"
        "most 64, each named once); without, the first operand is the only one and\n"
        "*CMD* follows it.\n"
        "\n"
        "No process *CMD* starts outlives the run: if the lock is lost, *CMD* and every\n"
        "process it started get SIGTERM, then SIGKILL, and `redlock` exits 80; those\n"
        "still running when *CMD* exits get the same before the lock is released; if\n"
        "`redlock` is killed, they are killed. SIGINT, SIGTERM, SIGHUP and SIGQUIT are\n"
        "forwarded to *CMD*.\n"
        "\n"
        "With `--owner` *TOKEN*, a `run` or `acquire` with the same *TOKEN* gets the\n"
        "lock at once while it is held for *TOKEN* (a nested `redlock run --owner`),\n"
        "as another hold with its own value, released on its own; the lock is freed\n"
        "with the last hold. Never share a *TOKEN* between independent workers.",
    .exit_summary =
        "*CMD*'s (128+*N* if signal *N* killed it), 75 held by another holder, 69 no\n"
        "quorum reachable, 77 credentials refused, 80 lock lost, 126 *CMD* not\n"
        "executable, 127 *CMD* not found, 64 usage, 78 configuration.",
    .details =
        "No process that *CMD* starts outlives the run: when the lock is lost, when\n"
        "`redlock` is killed and when *CMD* exits, every process *CMD* started (its\n"
        "children and theirs, background jobs, daemons, processes that moved to a\n"
        "session or process group of their own) is stopped, and `redlock` exits, and\n"
        "releases the lock, only once they are all gone. Step by step:\n"
        "\n"
        "1. Acquire one lock on every *RESOURCE*, all of them or none (see\n"
        "   [Resources](#resources)); with `--owner`, the reentrant form (see\n"
        "   [Reentrant locks](#reentrant-locks)); unless `--no-fencing`, with a\n"
        "   fencing token (see [Fencing tokens](#fencing-tokens)). With `--wait` *TIME*, retry with the\n"
        "   configured delay and jitter until *TIME* has passed; `--wait 0` tries\n"
        "   once. If the lock is not acquired, *CMD* is not run and `redlock` exits\n"
        "   with 75 when another holder has it (`-E` *N*: *N*), 69 when no quorum of\n"
        "   masters could be reached, 77 when masters refused our credentials (see\n"
        "   [Exit status](#exit-status)).\n"
        "2. Run *CMD* with its arguments, looked up in `PATH` when it contains no\n"
        "   slash, with standard input, output and error inherited. Its environment\n"
        "   gets `REDLOCK_RESOURCE` (the resource; of several, the first given),\n"
        "   `REDLOCK_VALUE` (the lock's value: another process could release it with\n"
        "   `redlock release`; it names this host, `redlock`'s pid, the time and\n"
        "   *CMD*'s name, not its arguments, which `status` shows),\n"
        "   `REDLOCK_VALIDITY_MS` (how long the lock was valid\n"
        "   for when *CMD* started, before any extension) and `REDLOCK_FENCING_TOKEN`\n"
        "   (the lock's fencing token; not set with `--no-fencing`); see\n"
        "   [Environment](#environment).\n"
        "3. While *CMD* runs, extend the lock about every third of its TTL (within\n"
        "   10 %, drawn anew each time; the first anywhere from a tenth of that on);\n"
        "   a failed extension is retried after the\n"
        "   configured retry delay and jitter, twice as long after each failure in a\n"
        "   row, the last retry going out in time to be heard. If no\n"
        "   extension has succeeded and less than a sixth of the TTL of validity is\n"
        "   left, or a quorum of masters says the value is no longer ours (the key\n"
        "   expired or another holder has it), the lock is lost: *CMD* and every\n"
        "   process it started get SIGTERM at once, then SIGKILL after `--kill-after`\n"
        "   *TIME* (default: half the validity left when the loss was detected, so\n"
        "   that they are gone before anyone else can take the lock), and `redlock`\n"
        "   releases what is left of the lock and exits with 80 once they are all gone\n"
        "   (see [Signals](#signals)).\n"
        "4. SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to `redlock` are passed on to\n"
        "   *CMD*'s own process (once *CMD* has exited, to the processes it left); see\n"
        "   [Signals](#signals).\n"
        "5. When *CMD* exits, processes it started may still run (a background job\n"
        "   `cmd &`, a daemon): they get SIGTERM, then SIGKILL after `--kill-after`\n"
        "   *TIME* (default: half the validity left when *CMD* exited), while the lock\n"
        "   stays held and extended; a line on standard error says how many. Then\n"
        "   release the lock and exit with *CMD*'s status: its exit code, or 128 + *N*\n"
        "   when signal *N* killed it. A release that fails is reported on standard\n"
        "   error; the lock then expires after its TTL.\n"
        "\n"
        "The first `--` among the operands ends the resources and is dropped; without\n"
        "one, the first operand is the only *RESOURCE*. Every argument from *CMD* on is\n"
        "passed to *CMD* as is, `--` included, so *CMD*'s own options need no quoting;\n"
        "but a *CMD* with a `--` among its arguments needs one before it too:\n"
        "`redlock run R -- git checkout -- FILE` (without the first `--`, `R`, `git`\n"
        "and `checkout` would be the resources).\n"
        "\n"
        "If `redlock` itself is killed, even with `kill -9`, every process *CMD*\n"
        "started is killed at once (SIGKILL), since it would otherwise go on\n"
        "unprotected once the lock expires; the lock frees itself after its TTL.\n"
        "\n"
        "*CMD* runs under a small process of `redlock`'s, its guardian\n"
        "(`redlock-guard` in `ps -o comm`), forked before anything else. It forks\n"
        "*CMD*'s process at once too, which waits (a second `redlock-guard`) until\n"
        "the lock is held, then runs *CMD*: a lock just taken does not wait for a\n"
        "fork. The guardian\n"
        "is a child subreaper (`PR_SET_CHILD_SUBREAPER`, see `prctl`(2)): a process\n"
        "below it whose parent exits becomes its child rather than init's, so\n"
        "whatever *CMD* starts stays below it, including processes that call\n"
        "`setsid`(2) or `setpgid`(2) or fork twice to become daemons. It finds them\n"
        "in `/proc`, signals them, and waits until it has no child left; it runs as\n"
        "the user, with no privilege and no cgroup. It learns that `redlock` died\n"
        "from a pipe that the kernel closes however `redlock` ends. It has a process\n"
        "group of its own, so that a SIGKILL sent to `redlock`'s whole group\n"
        "(`timeout -s KILL`, `kill -9 -`*PGID*) does not take it along; *CMD* runs in\n"
        "`redlock`'s group, in the terminal's foreground when `redlock` is. Should the\n"
        "guardian itself be killed, `redlock` kills what it left, releases the lock\n"
        "and exits with 70.\n"
        "\n"
        "What can still escape:\n"
        "\n"
        "- processes started by asking another running process, which are not\n"
        "  descendants of *CMD*: `systemd-run`, `at`, `batch`, cron, the remote side\n"
        "  of `ssh`, containers started by a daemon (`docker run`), a `tmux` or\n"
        "  `screen` server that was already running, D-Bus activation;\n"
        "- processes that `redlock`'s user may not signal (a set-user-ID program such\n"
        "  as `sudo` that switched to another user): `redlock` says so on standard\n"
        "  error and waits for them to exit, holding the lock unless it was lost;\n"
        "- processes running when `redlock` and its guardian are both killed with\n"
        "  SIGKILL before the guardian could act (say `kill -9` naming both pids):\n"
        "  *CMD*'s own process is killed, the others go to the next subreaper or to\n"
        "  init and run on.\n"
        "\n"
        "A process stuck in the kernel (uninterruptible sleep, say on a hung NFS\n"
        "mount) dies only when it leaves it; `redlock` waits for that.",
};

static const cli_option *const acquire_options[] = {
    &opt_ttl, &opt_wait, &opt_conflict_exit, &opt_lock_delay, &opt_owner, &opt_label,
    &opt_fencing, &opt_slots, &opt_json, &opt_command_help};

static const cli_command command_acquire = {
    .name = "acquire",
    .options = acquire_options,
    .option_count = ARRAY_SIZE(acquire_options),
    .operands = "*RESOURCE*...",
    .operand_count = CLI_OPERANDS_CHECKED,
    .run = cmd_acquire,
    .brief = "take the lock, print its value",
    .summary =
        "Take one lock on every *RESOURCE* (all of them or none; at most 64, each named\n"
        "once) and print its value on the first line of stdout\n"
        "(`V=$(redlock acquire R)` works). The lock is not extended: it expires after\n"
        "its TTL unless released (`redlock release R \"$V\"`) or extended first, with\n"
        "the same resources in any order.\n"
        "\n"
        "With `--owner` *TOKEN*, an `acquire` or `run` with the same *TOKEN* gets the\n"
        "lock at once while it is held for *TOKEN*, as another hold with its own value,\n"
        "released on its own; the lock is freed with the last hold. Never share a\n"
        "*TOKEN* between independent workers.",
    .exit_summary = "0 acquired, 75 held by another holder, 69 no quorum reachable, 77\n"
                    "credentials refused, 64 usage, 78 configuration.",
    .details =
        "Without `--json`, nothing is printed on standard output when the lock is not\n"
        "acquired. With `--json`, one JSON object is printed instead, whatever the\n"
        "outcome:\n"
        "\n"
        "```json\n"
        "{\"resource\":\"R\",\"resources\":[\"R\"],\"status\":\"REDLOCK_OK\",\n"
        " \"message\":\"success\",\"acquired\":true,\"value\":\"3f0c...\",\n"
        " \"validity_ms\":9893,\"ttl_ms\":10000,\"elapsed_ms\":1,\"attempts\":1,\n"
        " \"fencing_token\":null,\"masters_ok_at_decision\":3,\"master_count\":5,\"quorum\":3,\n"
        " \"masters\":[{\"node\":\"127.0.0.1:7001\",\"outcome\":\"ok\",\"error\":null},...]}\n"
        "```\n"
        "\n"
        "`resource` is the first *RESOURCE* given and `resources` every one, in the\n"
        "order given. `validity_ms` is how long the lock can be relied on from now,\n"
        "`elapsed_ms` what the last attempt took, `masters_ok_at_decision` how many of\n"
        "the `master_count` masters had granted it when the outcome was decided (see\n"
        "[JSON output](#json-output)), `quorum` how many were needed and `attempts`\n"
        "how many attempts were made. `fencing_token` is the lock's fencing token with\n"
        "`--fencing` (see [Fencing tokens](#fencing-tokens)), else null; the plain output\n"
        "stays the value alone. When the lock is not acquired, the object says\n"
        "`\"acquired\":false`, with the library's status name and message, and `value`,\n"
        "`validity_ms`, `ttl_ms` and `fencing_token` are null.",
};

static const cli_option *const release_options[] = {&opt_json, &opt_command_help};

static const cli_command command_release = {
    .name = "release",
    .options = release_options,
    .option_count = ARRAY_SIZE(release_options),
    .operands = "*RESOURCE*... *VALUE*",
    .operand_count = CLI_OPERANDS_CHECKED,
    .run = cmd_release,
    .brief = "release a lock taken with acquire",
    .summary = "Delete every *RESOURCE* on every master where it still holds *VALUE* (never\n"
               "a key holding another value). *VALUE* is the last operand; the resources are\n"
               "the lock's, in any order.",
    .exit_summary =
        "0 released, 1 *VALUE* was on no master (the lock had expired or is someone\n"
        "else's), 69 no quorum reachable, 77 credentials refused, 64 usage, 78\n"
        "configuration.",
    .details =
        "One attempt, without retries. With `--json`, print, whatever the outcome:\n"
        "\n"
        "```json\n"
        "{\"resource\":\"R\",\"resources\":[\"R\"],\"status\":\"REDLOCK_OK\",\n"
        " \"message\":\"success\",\"released\":true,\"masters_ok_at_decision\":5,\n"
        " \"master_count\":5,\"quorum\":3,\"masters\":[...]}\n"
        "```\n"
        "\n"
        "where `status` is the library's status name and `masters_ok_at_decision` the\n"
        "number of masters the keys had been deleted on when the outcome was decided.",
};

static const cli_option *const extend_options[] = {&opt_ttl, &opt_lock_delay, &opt_json,
                                                   &opt_command_help};

static const cli_command command_extend = {
    .name = "extend",
    .options = extend_options,
    .option_count = ARRAY_SIZE(extend_options),
    .operands = "*RESOURCE*... *VALUE*",
    .operand_count = CLI_OPERANDS_CHECKED,
    .run = cmd_extend,
    .brief = "reset a lock's time-to-live",
    .summary =
        "Reset the time-to-live of the lock on every *RESOURCE* holding *VALUE* on every\n"
        "master where they all still hold it, and print the new validity in\n"
        "milliseconds. *VALUE* is the last operand; the resources are the lock's, in any\n"
        "order.",
    .exit_summary = "0 extended, 1 the lock is no longer ours, 69 no quorum reachable, 77\n"
                    "credentials refused, 64 usage, 78 configuration.",
    .details =
        "The new time-to-live is `--ttl`'s, or else the configuration's `ttl_ms`. It\n"
        "is extended when a quorum of masters extended it. With `--json`, print,\n"
        "whatever the outcome (`validity_ms` is null on failure):\n"
        "\n"
        "```json\n"
        "{\"resource\":\"R\",\"resources\":[\"R\"],\"status\":\"REDLOCK_OK\",\n"
        " \"message\":\"success\",\"extended\":true,\"validity_ms\":29690,\"ttl_ms\":30000,\n"
        " \"masters_ok_at_decision\":5,\"master_count\":5,\"quorum\":3,\"masters\":[...]}\n"
        "```",
};

static const cli_option *const status_options[] = {&opt_json, &opt_command_help};

static const cli_command command_status = {
    .name = "status",
    .options = status_options,
    .option_count = ARRAY_SIZE(status_options),
    .operands = "*RESOURCE*...",
    .operand_count = CLI_OPERANDS_CHECKED,
    .run = cmd_status,
    .brief = "show the lock on every master",
    .summary =
        "Show, for every master, whether it answers, the value *RESOURCE* holds there\n"
        "(or `free`) and its remaining time-to-live. Of several resources, read at one\n"
        "instant on each master: the value they all hold and the least time-to-live, or\n"
        "`mixed` when they do not all hold one value.",
    .exit_summary = "0 a quorum of masters answered, 69 otherwise, 77 credentials refused,\n"
                    "64 usage, 78 configuration.",
    .details =
        "One line per master: its name, then `held`, the value and its remaining\n"
        "time-to-live (PTTL), or `free`, or `unreachable` and why; of several\n"
        "resources, `mixed` too, when some are free and others held, or they are held\n"
        "by different values; then the server, as its `INFO` named it:\n"
        "\n"
        "```text\n"
        "127.0.0.1:7001  held  3f0c5d18e7a94b2c8d0f61a5b7e93c42;h=web1;p=4242;t=...;l=...\n"
        "    pttl 9410 ms  token 17  server redis 7.0.15  holder web1 pid 4242\n"
        "    since 2026-01-31T12:00:00.250Z  label nightly-report --full\n"
        "127.0.0.1:7002  free  server valkey 9.1.2\n"
        "127.0.0.1:7003  unreachable  (connect: Connection refused)\n"
        "127.0.0.1:7004  mixed  (not all held by one value)\n"
        "```\n"
        "\n"
        "A value is shown as is, with control bytes, non-ASCII bytes and backslashes\n"
        "as `\\x`*NN*; the value of a reentrant lock is its owner's *TOKEN* (see\n"
        "[Reentrant locks](#reentrant-locks)); a key without expiry shows `no expiry`\n"
        "instead of its PTTL; a lock taken with a fencing token shows it (`token`).\n"
        "Who holds it ends the line (one line, wrapped above): `holder` *HOST* `pid`\n"
        "*PID* `since` *TIME* (UTC) `label` *LABEL*, which `run` writes in the value\n"
        "(this host, its own pid, when, and *CMD*'s name, never its arguments), as\n"
        "does a program that gives the library's acquire a label; or `unknown holder`\n"
        "for a value without it (another tool's, an earlier version's, a reentrant\n"
        "lock's *TOKEN*). It is what the holder wrote of itself: for finding it, not a\n"
        "proof of ownership.\n"
        "A master whose OKs do not count yet, as it restarted less than `max_ttl_ms`\n"
        "ago (see `ping`), says so at the end of its line: `restarted` *N* `s ago: not\n"
        "counted for` *M* `s more`. Exit 0 when a quorum of masters answered, counted\n"
        "or not (what they hold is read all the same); otherwise 77\n"
        "when masters refused our credentials, else 69. With `--json`:\n"
        "\n"
        "```json\n"
        "{\"resource\":\"R\",\"resources\":[\"R\"],\"status\":\"REDLOCK_OK\",\n"
        " \"message\":\"success\",\"quorum\":3,\"fencing_token\":17,\n"
        " \"masters\":[{\"node\":\"127.0.0.1:7001\",\"reachable\":true,\"held\":true,\n"
        " \"mixed\":false,\"value\":\"3f0c...\",\"pttl_ms\":9410,\"fencing_token\":17,\n"
        " \"error\":null,\"restart\":\"counts\",\"restart_excluded_ms\":null,\n"
        " \"holder\":{\"host\":\"web1\",\"pid\":4242,\"since_ms\":1769860800250,\n"
        " \"since\":\"2026-01-31T12:00:00.250Z\",\"label\":\"nightly-report --full\"}},...]}\n"
        "```\n"
        "\n"
        "where `held` says whether the master has the key (every key, all holding one\n"
        "value), `mixed` whether it has some of the keys, or keys holding different\n"
        "values (`held` is false then), `value` is null when `held` is false,\n"
        "`pttl_ms` is null when the key is absent, has no expiry or the master did not\n"
        "answer, `stats` the client's counters for that master (as in `ping --json`), a\n"
        "master's `fencing_token` is the token of the lock held there (null\n"
        "when it was taken without one), the top-level `fencing_token` the one a\n"
        "quorum of masters show (else null), `error` says why a master is\n"
        "unreachable, `restart` and `restart_excluded_ms` are its restart state\n"
        "(as in `ping --json`), and `holder` who holds the key (null: unknown, as\n"
        "above).\n"
        "\n"
        "A fenced lock's token is kept on each master beside its key, for as long as\n"
        "the key lives (see [Fencing tokens](#fencing-tokens)); of a reentrant\n"
        "owner's holds, the latest one's while it is held.",
};

static const cli_option *const ping_options[] = {&opt_json, &opt_command_help};

static const cli_command command_ping = {
    .name = "ping",
    .options = ping_options,
    .option_count = ARRAY_SIZE(ping_options),
    .operands = "",
    .operand_count = 0,
    .run = cmd_ping,
    .brief = "check every master",
    .summary = "PING every master and show whether it answers and how fast.",
    .exit_summary = "0 a quorum of masters answered and counts, 69 otherwise, 77 credentials\n"
                    "refused, 64 usage, 78 configuration.",
    .details =
        "One line per master: its name, then `ok`, the round-trip time and the server\n"
        "as its `INFO` named it, or `unreachable` and why; a master that answers but whose OKs do not count yet,\n"
        "as its server started less than `max_ttl_ms` ago and it is not declared\n"
        "`durable` (docs/safety.md, \"Masters restarted empty\"), says how long ago\n"
        "and for how long more:\n"
        "\n"
        "```text\n"
        "127.0.0.1:7001  ok  0.21 ms  server redis 7.0.15\n"
        "127.0.0.1:7002  ok  0.19 ms  server redis 7.0.15  restarted 4 s ago: not counted\n"
        "    for 27 s more\n"
        "127.0.0.1:7003  unreachable  (connect: Connection refused)\n"
        "```\n"
        "\n"
        "Exit 0 when a quorum of masters answered and counts; otherwise 77 when\n"
        "masters refused our credentials, else 69: too few answered, or a quorum\n"
        "answered but too few of them count (`REDLOCK_ERESTARTED`, and stderr says how\n"
        "many count), when no lock could be taken now. With `--json`:\n"
        "\n"
        "```json\n"
        "{\"status\":\"REDLOCK_OK\",\"message\":\"success\",\"quorum\":3,\n"
        " \"masters\":[{\"node\":\"127.0.0.1:7001\",\"reachable\":true,\n"
        " \"latency_us\":210,\"error\":null,\"restart\":\"counts\",\n"
        " \"restart_excluded_ms\":null,\"stats\":{\"requests\":1,\n"
        " \"outcomes\":{\"ok\":1},\"late\":0,\"connects\":1,\"state\":\"ready\",\n"
        " \"latency_us_buckets\":[0,0,0,0,0,0,0,0,1,0,...],\"latency_sum_us\":210,\n"
        " \"in_flight\":0,\"queued\":0}},...]}\n"
        "```\n"
        "\n"
        "where `latency_us` is null for a master that did not answer, `restart` is\n"
        "`counts`, `excluded` (restarted too recently: `restart_excluded_ms` is the\n"
        "time left, null otherwise) or `unknown` (its run not read), and `stats` is\n"
        "the client's counters for that master over the command: requests sent,\n"
        "their outcomes, replies after their deadline, connections made, the\n"
        "connection's state, and the replies' latency as a histogram (bucket *b*\n"
        "counts latencies from 2^(*b*-1) to 2^*b* microseconds) and its sum, and\n"
        "the requests still unanswered and still waiting to be sent at the end; the\n"
        "library's `redlock_client_stats()`. `status --json` shows them too.",
};

static const cli_option *const check_options[] = {&opt_json, &opt_command_help};

static const cli_command command_check = {
    .name = "check",
    .options = check_options,
    .option_count = ARRAY_SIZE(check_options),
    .operands = "",
    .operand_count = 0,
    .run = cmd_check,
    .brief = "find what makes Redlock unsafe on masters",
    .summary =
        "Check every master for what makes Redlock unsafe there: its clock, eviction,\n"
        "persistence against the restart rule, a replica or cluster mode, one server\n"
        "named twice, and what its ACL refuses; say what each finding means and what\n"
        "to change.",
    .exit_summary = "0 every master safe and nothing found, 1 findings but a quorum of masters\n"
                    "safe, 69 fewer safe masters than a quorum, 77 credentials refused, 64 usage,\n"
                    "78 configuration.",
    .details =
        "A health check for monitoring: `ping`, then, on each master's connection,\n"
        "`INFO`, `CONFIG GET save` and `appendfsync`, an `EVAL` of a script returning\n"
        "1 and a `PTTL` of a clock probe key and of the restart marker, pipelined (the\n"
        "library's `redlock_health_async()`; no lock operation changes). One line per\n"
        "master: its name, its state (`ok`, `warning`, `unsafe` or `unreachable`), the\n"
        "round-trip time, its clock verdict (`ok`, `fast`, `slow`, or `not-checked`\n"
        "and why) and its persistence (`none`, `rdb`, `aof (appendfsync` *P*`)`,\n"
        "`unknown` when `CONFIG GET` is refused) and its server; then one line per finding, `unsafe:`\n"
        "or `warning:`, saying what it means and what to change:\n"
        "\n"
        "```text\n"
        "127.0.0.1:7001  ok  0.21 ms  clock ok  persistence rdb  server valkey 9.1.2\n"
        "127.0.0.1:7002  unsafe  0.25 ms  clock ok  persistence rdb  server redis 8.0.2\n"
        "  unsafe: maxmemory-policy is allkeys-lru: Redis may evict lock keys, so two\n"
        "clients can hold the lock; set maxmemory-policy noeviction\n"
        "127.0.0.1:7003  unreachable  (connect: Connection refused)\n"
        "```\n"
        "\n"
        "Unsafe: a clock proven fast, a `maxmemory-policy` other than `noeviction`, a\n"
        "replica (INFO's role), cluster mode, scripts refused, a master declared\n"
        "`durable` whose `appendonly` or `appendfsync always` is off, a master not\n"
        "counted now as it restarted, and a second config entry for one server.\n"
        "Warnings: a slow clock, the clock probe keys (`redlock:clock:*`) or the restart\n"
        "marker keys (`redlock:restart:*`) refused by the ACL, and a `durable`\n"
        "declaration that cannot be checked. A master that is not `durable` is waited\n"
        "out after a restart whatever it keeps, so its persistence is shown, not\n"
        "judged. Exit 0 when every master answered and nothing was found; 1 when\n"
        "something was, but a quorum of masters is safe (warnings only, or unsafe or\n"
        "unreachable masters fewer than a quorum can spare); 69 when fewer masters\n"
        "than a quorum are safe; 77 when masters refused our credentials. With\n"
        "`--json`:\n"
        "\n"
        "```json\n"
        "{\"status\":\"REDLOCK_OK\",\"message\":\"success\",\"quorum\":2,\"safe\":2,\n"
        " \"settings_read\":true,\"masters\":[{\"node\":\"127.0.0.1:7002\",\n"
        " \"state\":\"unsafe\",\"reachable\":true,\"latency_us\":250,\"error\":null,\n"
        " \"clock\":{\"state\":\"trusted\",\"slow\":false,\"rate_min\":null,\n"
        " \"rate_max\":null,\"verdict\":\"ok\",\"why_not_checked\":null},\n"
        " \"persistence\":\"rdb\",\"role\":\"master\",\"cluster_enabled\":false,\n"
        " \"maxmemory_policy\":\"allkeys-lru\",\"durable\":false,\"aof\":false,\n"
        " \"appendfsync\":\"everysec\",\"rdb\":true,\"scripting\":true,\n"
        " \"acl_probe_keys\":true,\"acl_marker_keys\":true,\"restart\":\"counts\",\n"
        " \"restart_excluded_ms\":null,\"findings\":[{\"severity\":\"unsafe\",\n"
        " \"code\":\"maxmemory-policy\",\"message\":\"maxmemory-policy is ...\"}]},...]}\n"
        "```\n"
        "\n"
        "where a setting not known (the master did not answer, or refused the\n"
        "question) is null, and a finding's `code` is one of `clock-fast`,\n"
        "`clock-slow`, `maxmemory-policy`, `replica`, `cluster`, `scripting`,\n"
        "`acl-probe-keys`, `acl-marker-keys`, `durable`, `restarted` and\n"
        "`same-server`. `ping` stays a liveness probe: exit 0 when a quorum answers\n"
        "and counts, whatever this finds.",
};

static const cli_option *const fencing_init_options[] = {&opt_json, &opt_command_help};

static const cli_command command_fencing_init = {
    .name = "fencing-init",
    .options = fencing_init_options,
    .option_count = ARRAY_SIZE(fencing_init_options),
    .operands = "[*FLOOR*]",
    .operand_count = CLI_OPERANDS_CHECKED,
    .run = cmd_fencing_init,
    .brief = "put the masters' fencing counters in use",
    .summary =
        "Put the fencing counter of every master whose counter is not in use in use, at\n"
        "*FLOOR* (default 0) or the value it holds if greater. Not needed on a new\n"
        "deployment (the first fenced lock puts the counters in use); for an operator\n"
        "who wants tokens above a *FLOOR* of their own.",
    .exit_summary = "0 a quorum of masters has its counter in use, 69 otherwise, 77 credentials\n"
                    "refused, 64 usage, 78 configuration.",
    .details =
        "Fenced locks (`run`, `acquire --fencing`) need a fencing counter in use on a\n"
        "quorum of masters (see [Fencing tokens](#fencing-tokens)). A counter counts\n"
        "only in the run of its master that stored it: after a restart a master's\n"
        "counter is seeded again, by the next fenced acquires, from a majority of the\n"
        "other masters, or, when fewer of them have one in use (a new deployment, a\n"
        "majority restarted), from a quorum and the clock floor (the wall clock in\n"
        "microseconds). A *FLOOR* is at least every token ever handed out (the\n"
        "greatest the protected storage has seen); a lower one lets later tokens be\n"
        "lower than earlier ones. Counters in use are left as they are. One line per\n"
        "master: `initialized` (this call put its counter in use), `in use already`,\n"
        "or why not:\n"
        "\n"
        "```text\n"
        "127.0.0.1:7001  initialized\n"
        "127.0.0.1:7002  in use already\n"
        "127.0.0.1:7003  unreachable  (connect: Connection refused)\n"
        "```\n"
        "\n"
        "With `--json`:\n"
        "\n"
        "```json\n"
        "{\"status\":\"REDLOCK_OK\",\"message\":\"success\",\"floor\":0,\"quorum\":3,\n"
        " \"masters\":[{\"node\":\"127.0.0.1:7001\",\"in_use\":true,\"initialized\":true,\n"
        "   \"error\":null},...]}\n"
        "```",
};

/* ---- redlock ------------------------------------------------------------------ */

static const cli_option *const tool_options[] = {&opt_config, &opt_node,      &opt_verbose,
                                                 &opt_quiet,  &opt_tool_help, &opt_version};

static const cli_command *const commands[] = {&command_run,    &command_acquire,
                                              &command_release, &command_extend,
                                              &command_status,  &command_ping,
                                              &command_check,   &command_fencing_init};

const cli_command cli_tool = {
    .options = tool_options,
    .option_count = ARRAY_SIZE(tool_options),
    .operands = "*COMMAND* [*ARGS*]",
    .operand_count = CLI_OPERANDS_CHECKED,
    .options_first = true,
    .summary = "Take a lock held on a majority of independent Redis masters (Redlock).",
    .commands = commands,
    .command_count = ARRAY_SIZE(commands),
    .environment = cli_environment,
    .exit_statuses = cli_exit_statuses,
    .notes = "*TIME*: seconds, or numbers with a unit `us`, `ms`, `s`, `m`, `h` or `d`\n"
             "(`2`, `250ms`, `1.5s`, `1m30s`, `1h 30min`); `--wait` also takes `forever`.\n"
             "\n"
             "`-c`, `-n`, `-v` and `-q` may also follow *COMMAND* (in `run`, before *RESOURCE*).\n"
             "\n"
             "See `man redlock`, or /usr/share/doc/redlock-tools/docs/cli.md.",
};

const cli_command *cli_find_command(const char *name)
{
    for (size_t i = 0; i < cli_tool.command_count; i++)
        if (strcmp(name, cli_tool.commands[i]->name) == 0)
            return cli_tool.commands[i];
    return NULL;
}
