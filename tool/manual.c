/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The manual of the redlock tool (manual.h): every section of redlock(1)
 * and docs/cli.md, in order. The synopsis, the commands and the options
 * come from the command table (commands.c); the rest is here, in markup
 * (markup.h). Update the date when the words change; then regenerate the
 * copies in the sources (cmake --build BUILD --target update-docs).
 */
#include "cli_command.h"

/* ---- Lists, which redlock --help shows in part ---------------------------- */

const doc_entry cli_environment[] = {
    {"`REDLOCK_CONFIG`", "the config file when `--config` is not given",
     "Ignored when empty."},
    {"`REDLOCK_PASSWORD`",
     "the password for `--node` masters whose URI gives none; safer than a URI, as the "
     "command line is visible to other users",
     NULL},
    {"`XDG_CONFIG_HOME`", NULL,
     "When set and not empty, `$XDG_CONFIG_HOME/redlock/redlock.yaml` is the first default "
     "configuration file."},
    {"`HOME`", NULL,
     "When `XDG_CONFIG_HOME` is unset or empty, `$HOME/.config/redlock/redlock.yaml` is the "
     "first default configuration file."},
    {"`PATH`", NULL, "Where `run` looks for *CMD* when it contains no slash."},
    {"`TMPDIR`", NULL,
     "Where `run --wait` keeps the files its calls take turns on when `/run/lock` cannot be "
     "written (`/tmp` when unset); see [Waiting on one host](#waiting-on-one-host)."},
    {"The variable a node's `password_env` names", NULL,
     "Holds that master's AUTH password; it is read when the configuration is loaded, and "
     "must be set and not empty."},
    {"`CREDENTIALS_DIRECTORY`", NULL,
     "Where a node's relative `password_file` is, when set and not empty: systemd sets it "
     "for a service with `LoadCredential=`."},
    {"`LIBEV_FLAGS`", NULL,
     "Read by libev, the event library `redlock` uses; when set, it chooses libev's event "
     "backend."},
    {NULL, NULL, NULL},
};

/* The terms are what the tool returns; the help, a label for --help. */
const doc_entry cli_exit_statuses[] = {
    {"`0`", "ok", "Success (`run`: *CMD* exited with 0)."},
    {"`1`", "not our lock",
     "`release`, `extend`: the lock is not ours (any more): it expired, or another holder "
     "has it. `check`: findings, with a quorum of masters safe."},
    {"`64`", "usage",
     "Bad arguments (`EX_USAGE`): an unknown command or option, a missing or extra operand, "
     "a bad *TIME* or `--node`, more than 64 `--node`, an empty or too long *RESOURCE*, "
     "*VALUE* or `--owner` *TOKEN*, more than 64 resources or one named twice; a TTL over "
     "`max_ttl_ms` while a master is not durable (`REDLOCK_EMAXTTL`); a TTL too short to "
     "ever give validity (`REDLOCK_EINVAL`, see [Time values](#time-values)), or, for `run`, "
     "to keep extended."},
    {"`69`", "no quorum reachable",
     "No quorum reachable: too few masters answered, because they are down, unreachable, "
     "too slow (no validity left once a quorum agreed), behind (`REDLOCK_EOVERLOAD`) or "
     "answered with errors; or too few of those that answered count: their clocks are proven "
     "fast (`REDLOCK_ECLOCK`), or their servers restarted less than `max_ttl_ms` ago "
     "(`REDLOCK_ERESTARTED`; `ping` too, when a quorum answers and fewer count); `check`: "
     "fewer masters than a quorum are safe; or, for a "
     "fenced lock, too few have a fencing counter in use (see `fencing-init`) "
     "(`EX_UNAVAILABLE`)."},
    {"`70`", "internal error",
     "Internal error: out of memory, a system call failed, or the library reported an "
     "unexpected error (`EX_SOFTWARE`); `run`: its guardian process was killed."},
    {"`75`", "held by another holder",
     "`acquire`, `run`: the resource is held by another holder, still when `--wait` ran out "
     "(`EX_TEMPFAIL`); `-E` *N* / `--conflict-exit-code` *N* makes it *N* (0 to 255), as "
     "`flock -E` does."},
    {"`77`", "credentials refused",
     "The masters refused our credentials: a wrong or missing password; or the ACL user "
     "lacks a permission the command needs (`NOPERM`, `REDLOCK_EPERM`; not retried) "
     "(`EX_NOPERM`)."},
    {"`78`", "configuration",
     "No configuration found, or a configuration that cannot be read, is not valid or lists "
     "no masters (`EX_CONFIG`)."},
    {"`80`", "lock lost",
     "`run`: the lock was lost while *CMD* ran, or held for `--max-hold`; *CMD* and every "
     "process it started were stopped."},
    {"`126`", NULL, "`run`: *CMD* was found but could not be executed."},
    {"`127`", NULL, "`run`: *CMD* was not found."},
    {"`128` + *N*", NULL,
     "`run`: *CMD* was killed by signal *N*; `run`, `acquire`: `redlock` got signal *N* "
     "(SIGINT, SIGTERM, SIGHUP or SIGQUIT) while acquiring the lock."},
    {"other", NULL, "`run`: *CMD*'s own exit status."},
    {NULL, NULL, NULL},
};

static const doc_entry cmd_environment[] = {
    {"`REDLOCK_RESOURCE`", NULL, "The resource; of several, the first given."},
    {"`REDLOCK_VALUE`", NULL,
     "The lock's value; with it, another process can release the lock "
     "(`redlock release \"$REDLOCK_RESOURCE\" \"$REDLOCK_VALUE\"`, naming every resource "
     "of a lock on several)."},
    {"`REDLOCK_VALIDITY_MS`", NULL,
     "How many milliseconds of validity the lock had when *CMD* started, before any "
     "extension."},
    {"`REDLOCK_FENCING_TOKEN`", NULL,
     "The lock's fencing token, a decimal number greater than that of every lock granted "
     "before it: pass it with every write to what the lock protects, and have that refuse "
     "a write with a token lower than one it has seen. Not set with `--no-fencing` (one "
     "inherited from an outer `run` is removed)."},
    {NULL, NULL, NULL},
};

static const doc_entry files[] = {
    {"`$XDG_CONFIG_HOME/redlock/redlock.yaml`, `~/.config/redlock/redlock.yaml`", NULL,
     "The user's configuration file: the first when `XDG_CONFIG_HOME` is set and not empty, "
     "the second otherwise."},
    {"`/etc/redlock/redlock.yaml`", NULL,
     "The system-wide configuration file, used when the user has none."},
    {"`/etc/redlock/redlock.yaml.example`", NULL,
     "An example configuration, commented, which the package installs (`config/redlock.yaml` "
     "in the sources): copy it to one of the files above and name your masters. The package "
     "never installs or changes `redlock.yaml` itself."},
    {"`/usr/share/bash-completion/completions/redlock`", NULL,
     "Completion of the commands and options for bash (with the `bash-completion` package, "
     "loaded on first use)."},
    {"`/usr/share/zsh/vendor-completions/_redlock`", NULL, "Their completion for zsh."},
    {"`/run/lock/redlock-`*HASH*`.lock`", NULL,
     "The files on which `run --wait` calls of one host take turns (see [Waiting on one "
     "host](#waiting-on-one-host)): empty, one per lock and set of masters, made as needed "
     "and left for the next; in `$TMPDIR` or `/tmp` where `/run/lock` cannot be written."},
    {"`/usr/share/doc/redlock-tools/docs/cli.md`", NULL, "This manual, in Markdown."},
    {"`/usr/share/doc/redlock-tools/docs/config.md`", NULL,
     "Every configuration key, with its type, default and range."},
    {NULL, NULL, NULL},
};

/* ---- The sections ------------------------------------------------------------ */

static const doc_part synopsis[] = {
    {.kind = DOC_SYNOPSIS, .command = &cli_tool},
};

static const doc_part description[] = {
    {DOC_TEXT,
     "`redlock` takes a Redlock from the shell, the way `flock`(1) takes a file\n"
     "lock, but across machines. A Redlock on *RESOURCE* is a key of that name,\n"
     "holding a random value, set with a time-to-live (TTL) on a majority\n"
     "(N/2 + 1, the quorum) of N independent Redis masters. The lock is held only\n"
     "while a quorum holds it and only for its *validity*: the TTL less the time\n"
     "the acquire took and an allowance for clock drift. A lock nobody releases\n"
     "frees itself when its TTL runs out.\n"
     "\n"
     "`redlock run` acquires the lock on *RESOURCE*, runs *CMD* while holding it,\n"
     "extending it in the background every third of its TTL, and releases it when\n"
     "*CMD* exits; its exit status is *CMD*'s. If the lock is lost while *CMD* runs\n"
     "(the masters cannot extend it before its validity ends, or another holder\n"
     "has it), *CMD* is stopped and `redlock` exits with status 80. No process that\n"
     "*CMD* starts outlives the run.\n"
     "\n"
     "One lock may cover several resources, taken all together or not at all (see\n"
     "[Resources](#resources)); with `--owner`, a lock is reentrant (see\n"
     "[Reentrant locks](#reentrant-locks)).\n"
     "\n"
     "The other commands act on one lock at a time, for scripts that manage a lock\n"
     "across several steps: `acquire` prints the lock's value, and `release` and\n"
     "`extend` take that value back; `status` and `ping` show what every master\n"
     "says.\n"
     "\n"
     "Global options come before *COMMAND*. A command's own options may come before\n"
     "or after its operands (`redlock extend R V --ttl 30s`), except in `run`, where\n"
     "everything after the first *RESOURCE* is an operand (the resources, then\n"
     "*CMD*'s). `--` ends the options; it lets an operand start with `-`. An\n"
     "option's value is the next argument (`--ttl 30s`) or follows an equals sign\n"
     "(`--ttl=30s`).",
     NULL, NULL},
};

static const doc_part commands[] = {
    {.kind = DOC_COMMANDS, .command = &cli_tool},
};

static const doc_part options[] = {
    {DOC_SUBSECTION, "Global options", NULL, NULL},
    {DOC_TEXT, "These come before *COMMAND*.", NULL, NULL},
    {.kind = DOC_OPTIONS, .command = &cli_tool},
    {DOC_SUBSECTION, "Command options", NULL, NULL},
    {DOC_TEXT,
     "Each command takes the options its synopsis shows, anywhere among its operands\n"
     "(in `run`, before the first *RESOURCE*).",
     NULL, NULL},
    {.kind = DOC_OPTIONS, .command = NULL},
};

static const doc_part time_values[] = {
    {DOC_TEXT,
     "*TIME* is written as `timeout`(1), `flock -w` and systemd write it: a bare\n"
     "number is seconds (`2`, `1.5`), or numbers each with a unit, summed: `us`\n"
     "(`usec`), `ms` (`msec`), `s` (`sec`), `m` (`min`), `h` (`hr`) or `d`, as in\n"
     "`250ms`, `1.5s`, `.5s`, `1m30s`, `1h 30min`, `1d`. A fraction is rounded to\n"
     "the nearest millisecond, halves up, from every digit written: `1.0005s` is\n"
     "1001 ms, `1.0004999s` 1000 ms, `2.5ms` 3 ms. A blank may separate the parts\n"
     "and a number from its unit; no sign, exponent, leading or trailing blank or\n"
     "other unit is accepted, and a bare number is allowed only alone (`1m30` is\n"
     "refused). Before 0.3 a bare number was milliseconds: write `1500ms` for them.\n"
     "\n"
     "The largest *TIME* is 2147483647 ms (about 24.8 days); `--ttl` must be at least\n"
     "1 ms once rounded. A *TIME* above 0 but below 1 ms (`500us`) is refused as too\n"
     "fine (`redlock: --wait 500us: below 1 ms, the finest TIME this takes`), not\n"
     "read as 0. A well-formed *TIME* outside these bounds is refused as out of range\n"
     "(`redlock: --ttl 0: out of range (1 ms to 2147483647 ms, about 24.8 days)`),\n"
     "anything else as not a *TIME*; all exit 64.\n"

     "\n"
     "A `--ttl` that could never give validity is refused with 64 before anything\n"
     "is sent (`run`: before *CMD* starts): the validity of an attempt is the TTL\n"
     "less the time the attempt took and the drift allowance (`ttl_ms` x\n"
     "`drift_factor` + 2 ms), so a TTL leaving less than 1 ms after the allowance\n"
     "and a 1 ms round trip (4 ms or less with the default `drift_factor`) is\n"
     "refused (`REDLOCK_EINVAL`). `run` keeps its lock extended, an extension\n"
     "every third of the TTL, the lock given up a sixth of it before the validity\n"
     "ends: it refuses with 64, before anything is acquired or run, a TTL that\n"
     "cycle can never keep (under 27 ms with the default `drift_factor`), and says\n"
     "the smallest that works.\n"
     "\n"
     "`--wait forever` (or `--wait inf`) retries until the lock is acquired or\n"
     "`redlock` gets SIGINT, SIGTERM, SIGHUP or SIGQUIT; it then gives up at once,\n"
     "releases what the attempt in flight took, and exits with 128 + *N*.",
     NULL, NULL},
};

static const doc_part resources[] = {
    {DOC_TEXT,
     "*RESOURCE* is the key the lock lives under, byte for byte: 1 to 1048576 bytes\n"
     "(1 MiB), any bytes an argument can carry (all but NUL), newlines included.\n"
     "Linux refuses to start a program with an argument longer than 131071 bytes\n"
     "(32 pages with its NUL: `execve` fails with `E2BIG`, \"Argument list too\n"
     "long\", before `redlock` runs), so that is the longest *RESOURCE* the tool can\n"
     "be given. An empty one is refused:\n"
     "`redlock: acquire: RESOURCE must be 1 to 1048576 bytes`, exit 64.\n"
     "\n"
     "One lock may cover several resources (`redlock acquire a b`,\n"
     "`redlock run a b -- CMD`): up to 64, 1048576 bytes in all. Each master sets\n"
     "every key or none, so the lock is held on all of them or on none, and two\n"
     "locks sharing a resource exclude each other. The order does not matter:\n"
     "`acquire b a` takes the same lock as `acquire a b`, and `release a b` *VALUE*\n"
     "releases it either way. `release`, `extend` and `status` take every resource\n"
     "of the lock, then (but for `status`) *VALUE*. Refused with 64 before anything\n"
     "is acquired: more than 64 resources\n"
     "(`redlock: acquire: at most 64 resources in one lock (65 given)`), a resource\n"
     "named twice (`redlock: acquire: resource a named twice`), more than 1048576\n"
     "bytes in all. In messages the resources are listed, `a, b`, the list cut with\n"
     "\"and *N* more\" when long.\n"
     "\n"
     "*VALUE* is a lock's value as `acquire` printed it (32 hexadecimal digits); 1 to\n"
     "1024 bytes are accepted.",
     NULL, NULL},
};

static const doc_part reentrant_locks[] = {
    {DOC_TEXT,
     "With `--owner` *TOKEN* (`run`, `acquire`), the lock is taken for *TOKEN*, 1 to\n"
     "1024 bytes naming its owner. While the lock is held for *TOKEN*, a `run` or\n"
     "`acquire` with the same *TOKEN* gets it at once, as another hold: a script\n"
     "holding a lock can call one that takes it again,\n"
     "`redlock run --owner T job -- redlock run --owner T job -- CMD`, without\n"
     "waiting for itself. Every other `run` or `acquire`, without `--owner` or with\n"
     "another *TOKEN*, finds the lock held (75).\n"
     "\n"
     "Each hold has its own value, printed by `acquire` or given to *CMD* as\n"
     "`REDLOCK_VALUE`, and is released or extended on its own with that value\n"
     "(`redlock release job` *VALUE*). The lock is freed with the release of its\n"
     "last hold, or when its keys expire: the holds share them, and a hold never\n"
     "shortens their time-to-live. `status` shows *TOKEN* as the value.\n"
     "\n"
     "Whoever knows *TOKEN* enters the lock: never share one between independent\n"
     "workers (two machines running the same job, say), which would then hold the\n"
     "lock together. Give each worker a token of its own, such as its host name and\n"
     "process id, and pass it only to what it runs itself.",
     NULL, NULL},
};

static const doc_part semaphores[] = {
    {DOC_TEXT,
     "With `--slots` *K* (`run`, `acquire`), at most *K* callers hold *RESOURCE* at\n"
     "once, across every host: \"at most 4 builds at a time\" is\n"
     "`redlock run --slots 4 --wait 10m builds -- make`. Each slot is a lock of its\n"
     "own key, *RESOURCE*`:slot:0` to *RESOURCE*`:slot:`*K-1*; a call tries them in\n"
     "turn and holds the first it wins, with everything a lock has: extended while\n"
     "*CMD* runs, a fencing token, `status` on the slot's key. Held by others, every\n"
     "slot refuses (75, or `--wait` for a release of any of them). `REDLOCK_RESOURCE`\n"
     "names the slot, and so does `acquire`, on the line after the value (`--json`:\n"
     "`resource`): `extend` and `release` take it as their *RESOURCE*. Every user of *RESOURCE* must give the same *K*: one with a\n"
     "larger *K* may take the slots beyond another's. Waiters on one host do not take\n"
     "turns (see [Waiting on one host](#waiting-on-one-host)): they may hold together.",
     NULL, NULL},
};

static const doc_part waiting_on_one_host[] = {
    {DOC_TEXT,
     "`run` calls with `--wait` on one host that wait for the same lock (the same\n"
     "resources, in any order, on the same masters) take turns first on a local file\n"
     "lock, as `flock`(1) does (see [Files](#files)): only the one whose turn it is\n"
     "asks the masters, and it passes the turn on once its release is written to\n"
     "them (each master reads it before the next waiter's requests, written after\n"
     "it), or once it has given up. Without it, every release woke every waiter on\n"
     "the host, each asking every master while one won. The masters still decide\n"
     "who holds the lock: waiters on other hosts ask them as before, and a turn is\n"
     "no lock.\n"
     "\n"
     "A turn is waited for at most one TTL, then the masters are asked as if there\n"
     "were no turns: a `run` that has the turn and is stopped (SIGSTOP, ^Z) holds\n"
     "the others back no longer than its lock could last. The time spent waiting\n"
     "for a turn counts in `--wait`. There are no turns with `--wait 0`, with\n"
     "`--owner` (a hold taken again must not wait for its holder's turn), with\n"
     "`--slots` (a semaphore's holders on one host hold together), for `acquire`\n"
     "(which returns while holding the lock), or when the file cannot be opened.",
     NULL, NULL},
};

static const doc_part fencing_tokens[] = {
    {DOC_TEXT,
     "A lock's holder can be paused past its validity (a GC pause, `SIGSTOP`,\n"
     "swapping) and write after the lock went to someone else. A fencing token\n"
     "closes that gap: a number greater for every lock granted later, on any\n"
     "resource, which the holder passes with each write and the protected storage\n"
     "checks, refusing a write with a token lower than the greatest it has seen.\n"
     "`run` takes its lock with a token and gives it to *CMD* in\n"
     "`REDLOCK_FENCING_TOKEN` (`--no-fencing`: no token, one round trip less);\n"
     "`acquire --fencing` shows it in its `--json` output's `fencing_token`, and\n"
     "`status` for as long as the lock is held; the configuration's\n"
     "`fencing: true` makes every lock fenced.\n"
     "\n"
     "The tokens come from one counter per master, in the key `redlock:fence`. The\n"
     "first fenced lock puts them in use, and a master that restarts is seeded\n"
     "again by the next fenced locks: from the others, or, when too few of them\n"
     "have a counter in use, from the clock floor (the wall clock in microseconds:\n"
     "tokens stay in order as long as clocks are not set back by more than the time\n"
     "since). Only when too few masters answer do fenced locks fail, with exit\n"
     "status 69 and a message that says so. See `docs/fencing.md` for the protocol,\n"
     "its proof with a model checker, and what a storage must do.",
     NULL, NULL},
};

static const doc_part json_output[] = {
    {DOC_TEXT,
     "With `--json`, every command but `run` prints one JSON object on one line, on\n"
     "success and on failure alike, built with jansson: always valid JSON in valid\n"
     "UTF-8.\n"
     "\n"
     "- **Bytes.** A resource or a value is any bytes. It goes out under one of two\n"
     "  keys: `resource` (`value`), a string, when its bytes are valid UTF-8\n"
     "  without NUL; otherwise `resource_base64` (`value_base64`) instead, the\n"
     "  bytes in standard base64 (RFC 4648, with padding), and `resource`\n"
     "  (`value`) is left out. `status` gives `\"held\":true|false` for every\n"
     "  master, so a missing `value` never reads as \"free\".\n"
     "- **Resources.** `resource` is the first *RESOURCE* given; `resources` lists\n"
     "  every one, in the order given, even when there is one. When any of them is\n"
     "  not text, `resources_base64` lists them all in base64 instead. `status`\n"
     "  gives `\"mixed\":true` for a master where the resources do not all hold one\n"
     "  value (some free, or held by different values); `held` is false there.\n"
     "- **Texts.** `node` (a master's name) and `error` (why a master failed: out\n"
     "  of reach, refusing our credentials, an error reply) are shown as they are\n"
     "  when valid UTF-8, else as in the text output (control and non-ASCII bytes\n"
     "  as `\\x`*NN*). `error` is null for a master that answered (`ok`, `held`,\n"
     "  `absent`) or had not yet (`pending`). `status`, `ping` and `check` give\n"
     "  each master's `server`, its name and version as its `INFO` said them\n"
     "  (`\"valkey 9.1.2\"`, `\"redis 7.0.15\"`), null when not known (never\n"
     "  connected, or `INFO` refused); the text output shows it as `server`\n"
     "  *NAME VERSION*.\n"
     "- **Null numbers.** A number that does not exist is `null`, never `-1` or\n"
     "  `-2`: `validity_ms` and `ttl_ms` of a failed acquire or extend (and\n"
     "  `ttl_ms` of `extend` without `--ttl`: the configuration's, not known to\n"
     "  the tool), `pttl_ms` of a master without the key, without an answer or\n"
     "  whose key has no expiry (`held` tells which), `latency_us` of a master\n"
     "  that did not answer.\n"
     "- **Status.** `status` and `message` are the library's status name\n"
     "  (`REDLOCK_ECONFLICT`, ...) and its sentence; `acquired`, `released` and\n"
     "  `extended` say whether it worked.\n"
     "- **Counts.** `masters_ok_at_decision` counts the masters that said OK (took,\n"
     "  kept or gave up our value) by the time the outcome was decided (of the last\n"
     "  attempt, with retries). The outcome is decided as soon as it is known, so\n"
     "  masters still to answer then (`\"outcome\":\"pending\"`) may take the lock\n"
     "  afterwards: `redlock status` can show more masters holding it than\n"
     "  `masters_ok_at_decision`. `master_count` is the number of masters, `quorum`\n"
     "  the number needed, `masters` each master's `outcome` (`ok`, `held`,\n"
     "  `absent`, `timeout`, `not-connected`, `auth-failed`, `error`, `pending`) in\n"
     "  configuration order.\n"
     "- **A master's clock.** `status`, `ping` and `check` give each master's\n"
     "  `clock`, what this run of the tool proved of the master's expiry clock\n"
     "  (docs/safety.md): `state` is `off` (not checked), `checking` (too few\n"
     "  samples yet), `trusted` (nothing proven against it) or `fast` (proven\n"
     "  fast: its OKs do not count); `slow` whether it is proven slower than ours\n"
     "  (its keys live longer: reported only); `rate_min` and `rate_max` the\n"
     "  bounds its samples prove on its clock's rate to ours, null while not\n"
     "  proven (a short command seldom proves one). `check` adds `verdict` and\n"
     "  `why_not_checked`.\n"
     "- **A master's counters.** `status` and `ping` give each master's `stats`,\n"
     "  the client's counters for it over the command (the library's\n"
     "  `redlock_client_stats()`): `requests` sent, their `outcomes` (a count by\n"
     "  outcome name), `late` replies after their deadline, `connects` made, the\n"
     "  connection's `state`, the replies' latency as a histogram\n"
     "  (`latency_us_buckets`: bucket *b* counts latencies from 2^(*b*-1) to\n"
     "  2^*b* microseconds) and its sum (`latency_sum_us`), and the requests still\n"
     "  unanswered (`in_flight`) and still waiting to be sent (`queued`) at the\n"
     "  end. `restart` is `counts`, `excluded` (restarted too recently:\n"
     "  `restart_excluded_ms` is the time left, null otherwise) or `unknown`.",
     NULL, NULL},
};

/* One line for each key the YAML loader takes (src/config/config_yaml.c's
 * tables): the generator lists the keys in the loader's order, with the
 * duration form of an `_ms` key beside it, and fails on a key without its
 * line here or a line without its key. docs/config.md has the rest. */
const doc_entry cli_config_top_keys[] = {
    {"connect_timeout_ms", NULL, "Time to connect to one master and finish the handshake."},
    {"command_timeout_ms", NULL, "Time one master has to answer one request."},
    {"ttl_ms", NULL, "The default TTL of a lock (`--ttl`)."},
    {"retry_count", NULL, "Retries of an acquire after the first attempt, without `--wait`."},
    {"retry_delay_ms", NULL, "Pause before each retry of an acquire."},
    {"retry_jitter_ms", NULL, "A random 0 to this added to each pause."},
    {"reconnect_min_ms", NULL, "First delay before reconnecting to a master (then doubled)."},
    {"reconnect_max_ms", NULL, "Cap of the doubling reconnect delay."},
    {"wait_by_notification", NULL,
     "A waiting acquire retries at once when a release is announced (`true`, the default)."},
    {"max_hold_ms", NULL, "Stop extending once a lock has been held this long (`--max-hold`)."},
    {"lock_delay_ms", NULL, "Keep the keys this much longer than the validity (`--lock-delay`)."},
    {"fencing", NULL, "Acquires hand out fencing tokens (`--fencing`)."},
    {"max_in_flight", NULL, "Requests sent to one master and not yet answered, at most."},
    {"clock_check", NULL, "Check the masters' clocks: `off`, `warn` or `enforce` (the default)."},
    {"clock_warmup_ms", NULL, "A first acquire waits until each master was checked this long."},
    {"clock_probe_ms", NULL, "Sample each master's clock at least this often while locks are "
                             "held (0: a tenth of `ttl_ms`)."},
    {"clock_quarantine_ms", NULL, "How long a master proven fast is left out."},
    {"max_ttl_ms", NULL,
     "The longest TTL any client of the deployment asks (0: `ttl_ms`); a restarted master "
     "counts this long after."},
    {"durable", NULL, "Every master keeps its keys across a restart (AOF, `appendfsync always`)."},
    {"script_free", NULL,
     "Masters with `SET IFEQ` (Valkey 8.1, Redis 8.4) extend plain locks without a script "
     "(`true`, the default)."},
    {"drift_factor", NULL, "Clock drift allowance: a lock's validity loses TTL times this, plus "
                           "2 ms."},
    {"nodes", NULL, "The masters, 1 to 64 (required); each a mapping of the keys below."},
    {"password_file", NULL, "File holding the AUTH password of every node without one of its "
                            "own (relative: in `$CREDENTIALS_DIRECTORY` when set)."},
    {"tls", NULL, "TLS to every TCP master (a build with TLS)."},
    {"tls_ca_file", NULL, "PEM file of the CAs a master's certificate must chain to."},
    {"tls_ca_dir", NULL, "Directory of hashed CA certificates."},
    {"tls_cert_file", NULL, "Client certificate (PEM chain)."},
    {"tls_key_file", NULL, "The client certificate's private key."},
    {"tls_server_name", NULL, "The name sent as SNI and checked in a master's certificate."},
    {NULL, NULL, NULL},
};

const doc_entry cli_config_node_keys[] = {
    {"host", NULL, "Host name or IP address of the master."},
    {"port", NULL, "TCP port (default 6379)."},
    {"socket", NULL, "Path of a unix socket, instead of `host` and `port`."},
    {"url", NULL, "The master as a URL (`redis://`, `rediss://`, `unix://`), as `--node` takes."},
    {"password", NULL, "AUTH password."},
    {"password_env", NULL, "Name of an environment variable holding the AUTH password."},
    {"password_file", NULL, "File holding the AUTH password (relative: in "
                            "`$CREDENTIALS_DIRECTORY` when set)."},
    {"username", NULL, "ACL user name for AUTH."},
    {"db", NULL, "Database to SELECT (default 0)."},
    {"connect_timeout_ms", NULL, "This master's own connect timeout."},
    {"command_timeout_ms", NULL, "This master's own command timeout."},
    {"durable", NULL, "This master keeps its keys across a restart."},
    {"tls", NULL, "TLS to this master."},
    {"tls_ca_file", NULL, "This master's own CA file."},
    {"tls_ca_dir", NULL, "This master's own CA directory."},
    {"tls_cert_file", NULL, "This master's own client certificate."},
    {"tls_key_file", NULL, "This master's own client key."},
    {"tls_server_name", NULL, "This master's own server name."},
    {NULL, NULL, NULL},
};

static const doc_part configuration[] = {
    {DOC_TEXT,
     "`redlock` reads one YAML file. It uses, in this order:\n"
     "\n"
     "1. the file given with `--config`;\n"
     "2. otherwise, the file named by `REDLOCK_CONFIG` if it is set and not empty;\n"
     "3. otherwise, unless `--node` is given, the first of these that exists:\n"
     "   `$XDG_CONFIG_HOME/redlock/redlock.yaml` (when `XDG_CONFIG_HOME` is set and\n"
     "   not empty; else `$HOME/.config/redlock/redlock.yaml`, when `HOME` is set\n"
     "   and not empty), then `/etc/redlock/redlock.yaml`.\n"
     "\n"
     "With `--node`, the masters are those given on the command line; the other\n"
     "settings come from the file of step 1 or 2 if there is one, and are the\n"
     "built-in defaults otherwise (step 3 is skipped). When no file is found and no\n"
     "`--node` is given, `redlock` says where it looked and exits with 78. A file\n"
     "that cannot be read or is not valid exits with 78 too, with a message naming\n"
     "the file and, for a problem in its contents, where it is:\n"
     "*FILE*`:`*LINE*`:`*COLUMN*`:` *KEYPATH*`:` *problem*.\n"
     "\n"
     "Only `nodes` is required:\n"
     "\n"
     "```yaml\n"
     "ttl_ms: 10000\n"
     "retry_count: 3\n"
     "nodes:\n"
     "  - host: 10.0.0.1\n"
     "    port: 6379\n"
     "  - host: 10.0.0.2\n"
     "  - host: 10.0.0.3\n"
     "    password_env: REDIS_PASSWORD\n"
     "```\n"
     "\n"
     "Each top-level `_ms` key (milliseconds) may be given as a duration instead,\n"
     "under its name without `_ms`, written as a *TIME* (`ttl: 30s`,\n"
     "`retry_delay: 250ms`; a bare number is seconds); not both. Unknown and\n"
     "repeated keys are errors. Every key's type, default and range is in\n"
     "[`docs/config.md`](config.md) (installed as\n"
     "`/usr/share/doc/redlock-tools/docs/config.md`); a commented example is\n"
     "`/etc/redlock/redlock.yaml.example` (`config/redlock.yaml` in the sources).\n"
     "The top-level keys:",
     NULL, NULL},
    {DOC_CONFIG_KEYS, "Key|Meaning", cli_config_top_keys, NULL},
    {DOC_TEXT, "The keys of each node (`host` or `socket` or `url` is required):", NULL, NULL},
    {DOC_CONFIG_KEYS, "Key|Meaning", cli_config_node_keys, NULL},
};

static const doc_part environment[] = {
    {DOC_DEFINITIONS, NULL, cli_environment, NULL},
    {DOC_TEXT,
     "`run` adds these variables to *CMD*'s environment, replacing any of the same\n"
     "name:",
     NULL, NULL},
    {DOC_DEFINITIONS, NULL, cmd_environment, NULL},
};

static const doc_part signals[] = {
    {DOC_TEXT,
     "`redlock run` passes SIGINT, SIGTERM, SIGHUP and SIGQUIT on to *CMD* and goes\n"
     "on waiting for it; when *CMD* exits, the lock is released and *CMD*'s status\n"
     "returned as usual. At a terminal, Ctrl-C reaches *CMD* and the processes of\n"
     "its process group directly too, so *CMD* may see SIGINT twice. *CMD* starts\n"
     "with an empty signal mask and the default action for these four signals,\n"
     "SIGPIPE and SIGCHLD, whatever `redlock` inherited; so `nohup`(1) does not keep\n"
     "SIGHUP from *CMD*. One of the four signals arriving while the lock is being\n"
     "acquired makes `redlock` give up: the acquire is abandoned (a lock it just\n"
     "obtained is released), *CMD* is not run and the exit status is 128 + *N* for\n"
     "signal *N*. `redlock acquire` does the same with these signals while it\n"
     "acquires (with `--wait forever`, the only way to stop it): nothing is\n"
     "printed, and a lock it just obtained is released.\n"
     "\n"
     "When the lock is lost while *CMD* runs, `redlock` sends SIGTERM (and SIGCONT,\n"
     "for a stopped process) to *CMD* and every process it started at once and, to\n"
     "those still running after the `--kill-after` time, SIGKILL. The default time\n"
     "is half the validity left when the loss was detected, so that they are gone\n"
     "before anyone else can take the lock. When the masters could not be reached\n"
     "that is about a twelfth of the TTL; when a quorum says the value is no longer\n"
     "ours, no validity is left and SIGKILL follows SIGTERM at once, unless\n"
     "`--kill-after` is given. `redlock` exits with 80 once they are all gone.\n"
     "Processes that *CMD* leaves running when it exits get the same, the default\n"
     "time being half the validity left then; `redlock` then exits with *CMD*'s\n"
     "status.\n"
     "\n"
     "The signals passed on go to *CMD*'s process only, not to processes it started\n"
     "(once *CMD* has exited, to the processes it left): a shell script given as\n"
     "*CMD* should pass them on to its children, or `exec` its last program.\n"
     "\n"
     "If `redlock` itself dies, even by SIGKILL, *CMD* and every process it started\n"
     "are killed with SIGKILL at once, since they would otherwise go on unprotected\n"
     "once the lock expires; the lock frees itself after its TTL. So are they when\n"
     "SIGKILL is sent to `redlock`'s whole process group.\n"
     "\n"
     "The other commands keep the default action for every signal but SIGPIPE,\n"
     "which `redlock` ignores. A lock taken by an `acquire` killed before it printed\n"
     "the value expires after its TTL.",
     NULL, NULL},
};

static const doc_part exit_status[] = {
    {DOC_TEXT, "One table for every command:", NULL, NULL},
    {DOC_TABLE, "Status|Meaning", cli_exit_statuses, NULL},
    {DOC_TEXT,
     "When masters fail for different reasons, the most specific one decides: an\n"
     "answer first (75 when the refusals of our value alone rule a quorum out; 1 for\n"
     "`release` and `extend` when our value is gone), then refused credentials or\n"
     "permissions (77 as soon as any master refused them: two masters refusing our\n"
     "password and three down exit 77, not 69; a master that answers `NOPERM` is\n"
     "not unreachable), then 69. With retries (`--wait`, or the\n"
     "configuration's `retry_count`), the last attempt decides. The line on standard\n"
     "error names the masters that failed and why.\n"
     "\n"
     "`run` passes *CMD*'s exit status through, so a *CMD* that itself exits with,\n"
     "say, 75 or 80 cannot be told apart from `redlock`'s own; the message on\n"
     "standard error can.",
     NULL, NULL},
};

static const doc_part diagnostics[] = {
    {DOC_TEXT,
     "Errors and the library's messages go to standard error, one line each,\n"
     "starting with `redlock: `. Passwords never appear in any output. A resource or\n"
     "a master's reply quoted in a message (and a master's reason in `status` and\n"
     "`ping` lines) shows control and non-ASCII bytes as `\\x`*NN*; a resource\n"
     "longer than 96 bytes is cut there and ends with `...`:\n"
     "\n"
     "```text\n"
     "redlock: could not acquire a\\x0ab: the resource is held by another holder (0 of 5 "
     "masters said OK, 3 needed; 1 attempt)\n"
     "```\n"
     "\n"
     "Started with standard input, output or error closed, `redlock` first opens\n"
     "`/dev/null` in its place, which *CMD* of `run` inherits: what would have gone\n"
     "there is discarded, never written into a connection to a master.",
     NULL, NULL},
};

static const doc_part files_section[] = {
    {DOC_DEFINITIONS, NULL, files, NULL},
};

static const doc_part examples[] = {
    {DOC_TEXT,
     "Run the nightly report from cron on whichever of several machines gets there\n"
     "first, and never on two at once:\n"
     "\n"
     "```cron\n"
     "# m h dom mon dow  command\n"
     "15 2 * * *  redlock -c /etc/redlock/redlock.yaml run --ttl 60s --wait 0 nightly-report "
     "-- /usr/local/bin/make-report\n"
     "```\n"
     "\n"
     "Every machine has the same line. One acquires the lock and runs the report,\n"
     "extending the lock every 20 seconds while it runs; the others find it held,\n"
     "print `redlock: could not acquire nightly-report: the resource is held by\n"
     "another holder` and exit with 75. A script that treats \"someone else has it\"\n"
     "as success, and only that:\n"
     "\n"
     "```sh\n"
     "redlock run --wait 0 nightly-report -- make-report\n"
     "case $? in\n"
     "  0)  echo \"report done\" ;;\n"
     "  75) echo \"another machine is on it\" ;;\n"
     "  69) echo \"no quorum of masters reachable; report not run\" >&2; exit 1 ;;\n"
     "  77) echo \"the masters refused our password; report not run\" >&2; exit 1 ;;\n"
     "  80) echo \"lost the lock midway; report stopped\" >&2; exit 1 ;;\n"
     "  *)  echo \"report failed\" >&2; exit 1 ;;\n"
     "esac\n"
     "```\n"
     "\n"
     "With `-E 0`, \"held\" exits 0 like success, as `flock -E 0` makes it.\n"
     "\n"
     "Hold a lock across the steps of a script, extending it between steps, and\n"
     "release it whatever happens:\n"
     "\n"
     "```sh\n"
     "V=$(redlock acquire --ttl 5m --wait 30s deploy) || exit\n"
     "trap 'redlock release deploy \"$V\"' EXIT\n"
     "build-release\n"
     "redlock extend --ttl 5m deploy \"$V\" >/dev/null || exit\n"
     "push-release\n"
     "```\n"
     "\n"
     "Take one lock on two resources for a script, and release both:\n"
     "\n"
     "```sh\n"
     "V=$(redlock acquire --ttl 5m --wait 30s db-primary db-replica) || exit\n"
     "trap 'redlock release db-primary db-replica \"$V\"' EXIT\n"
     "migrate-both\n"
     "```\n"
     "\n"
     "Let a locked job run steps that take the same lock themselves, with a token\n"
     "of its own (the steps are scripts that run\n"
     "`redlock run --owner \"$OWNER\" deploy -- ...`):\n"
     "\n"
     "```sh\n"
     "OWNER=$(hostname)-$$\n"
     "export OWNER\n"
     "redlock run --owner \"$OWNER\" deploy -- ./deploy-all.sh\n"
     "```\n"
     "\n"
     "See who holds a lock, as JSON, with masters given on the command line:\n"
     "\n"
     "```text\n"
     "$ redlock -n 10.0.0.1 -n 10.0.0.2 -n 10.0.0.3 status --json deploy\n"
     "{\"resource\":\"deploy\",\"resources\":[\"deploy\"],\"status\":\"REDLOCK_OK\",\n"
     "\"message\":\"success\",\"quorum\":2,\"masters\":[{\"node\":\"10.0.0.1:6379\",\n"
     "\"reachable\":true,\"held\":true,\"mixed\":false,\n"
     "\"value\":\"8b3ece5f5a17a8218ca41505ea39c493\",\n"
     "\"pttl_ms\":287410,\"error\":null},...]}\n"
     "```\n"
     "\n"
     "Check that enough masters answer:\n"
     "\n"
     "```sh\n"
     "redlock ping >/dev/null || echo \"no quorum of masters\" >&2\n"
     "```",
     NULL, NULL},
};

static const doc_part see_also[] = {
    {DOC_TEXT,
     "`flock`(1), `redis-server`(1), `redis-cli`(1).\n"
     "\n"
     "In the libredlock sources: [`docs/cli.md`](cli.md) (this manual, in\n"
     "Markdown), [`docs/config.md`](config.md) (the configuration file),\n"
     "[`docs/design.md`](design.md) (the algorithm and what its safety rests on).",
     NULL, NULL},
};

#define SECTION(title, parts) {title, parts, ARRAY_SIZE(parts)}

static const doc_section sections[] = {
    SECTION("Synopsis", synopsis),
    SECTION("Description", description),
    SECTION("Commands", commands),
    SECTION("Options", options),
    SECTION("Time values", time_values),
    SECTION("Resources", resources),
    SECTION("Reentrant locks", reentrant_locks),
    SECTION("Semaphores", semaphores),
    SECTION("Waiting on one host", waiting_on_one_host),
    SECTION("Fencing tokens", fencing_tokens),
    SECTION("JSON output", json_output),
    SECTION("Configuration", configuration),
    SECTION("Environment", environment),
    SECTION("Signals", signals),
    SECTION("Exit status", exit_status),
    SECTION("Diagnostics", diagnostics),
    SECTION("Files", files_section),
    SECTION("Examples", examples),
    SECTION("See also", see_also),
};

const doc_manual cli_manual = {
    .name = "redlock",
    .whatis = "take a lock held on a majority of independent Redis masters",
    .date = "2026-11-29",
    .sections = sections,
    .section_count = ARRAY_SIZE(sections),
};
