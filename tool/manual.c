/* SPDX-License-Identifier: BSD-3-Clause */
/* The manual of the redlock tool (manual.h): its lists, in markup
 * (markup.h). */
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
    {"The variable a node's `password_env` names", NULL,
     "Holds that master's AUTH password; it is read when the configuration is loaded, and "
     "must be set and not empty."},
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
     "has it."},
    {"`64`", "usage",
     "Bad arguments (`EX_USAGE`): an unknown command or option, a missing or extra operand, "
     "a bad *TIME* or `--node`, more than 64 `--node`, an empty or too long *RESOURCE* or "
     "*VALUE*."},
    {"`69`", "no quorum reachable",
     "No quorum reachable: too few masters answered, because they are down, unreachable, "
     "too slow (no validity left once a quorum agreed) or answered with errors "
     "(`EX_UNAVAILABLE`)."},
    {"`70`", "internal error",
     "Internal error: out of memory, a system call failed, or the library reported an "
     "unexpected error (`EX_SOFTWARE`); `run`: its guardian process was killed."},
    {"`75`", "held by another holder",
     "`acquire`, `run`: the resource is held by another holder, still when `--wait` ran out "
     "(`EX_TEMPFAIL`); `-E` *N* / `--conflict-exit-code` *N* makes it *N* (0 to 255), as "
     "`flock -E` does."},
    {"`77`", "credentials refused",
     "The masters refused our credentials: a wrong or missing password (`EX_NOPERM`)."},
    {"`78`", "configuration",
     "No configuration found, or a configuration that cannot be read, is not valid or lists "
     "no masters (`EX_CONFIG`)."},
    {"`80`", "lock lost",
     "`run`: the lock was lost while *CMD* ran; *CMD* and every process it started were "
     "stopped."},
    {"`126`", NULL, "`run`: *CMD* was found but could not be executed."},
    {"`127`", NULL, "`run`: *CMD* was not found."},
    {"`128` + *N*", NULL,
     "`run`: *CMD* was killed by signal *N*; `run`, `acquire`: `redlock` got signal *N* "
     "(SIGINT, SIGTERM, SIGHUP or SIGQUIT) while acquiring the lock."},
    {"other", NULL, "`run`: *CMD*'s own exit status."},
    {NULL, NULL, NULL},
};
