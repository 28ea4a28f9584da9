/* SPDX-License-Identifier: BSD-3-Clause */
/* The resources a command names: checked as the library would take them,
 * so that a bad set is a usage error (64) naming the problem, and shown in
 * messages. */
#include "cli_command.h"

#include <string.h>

/* "expected RESOURCE... VALUE": the command's operands, from its row. */
static void report_missing(const char *command)
{
    char names[128];
    const cli_command *cmd = cli_find_command(command);
    if (cmd != NULL)
        cli_operand_names(cmd, names, sizeof(names));
    else
        snprintf(names, sizeof(names), "RESOURCE");
    cli_error("%s: expected %s (see redlock %s --help)", command, names, command);
}

/* The index of a resource before i that is the same as set's i-th, or -1. */
static int earlier_twin(const cli_resources *set, size_t i)
{
    for (size_t k = 0; k < i; k++)
        if (set->lens[k] == set->lens[i] && memcmp(set->names[k], set->names[i], set->lens[i]) == 0)
            return (int)k;
    return -1;
}

int cli_resources_take(const char *command, char **operands, int count, int trailing,
                       cli_resources *set)
{
    set->count = 0;
    if (count < 1 + trailing) {
        report_missing(command);
        return EX_USAGE;
    }
    size_t n = (size_t)(count - trailing);
    if (n > REDLOCK_MAX_RESOURCES) {
        cli_error("%s: at most %d resources in one lock (%zu given)", command,
                  REDLOCK_MAX_RESOURCES, n);
        return EX_USAGE;
    }
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(operands[i]);
        if (len == 0 || len > REDLOCK_MAX_RESOURCE_LEN) {
            cli_error("%s: RESOURCE must be 1 to %u bytes", command, REDLOCK_MAX_RESOURCE_LEN);
            return EX_USAGE;
        }
        set->names[i] = operands[i];
        set->lens[i] = len;
        if (earlier_twin(set, i) >= 0) {
            char shown[CLI_SHOWN_SIZE];
            cli_error("%s: resource %s named twice", command,
                      cli_shown(shown, sizeof(shown), operands[i]));
            return EX_USAGE;
        }
        total += len;
    }
    /* Each argument is at most 128 KiB, but several may pass the library's
     * bound on a lock's names together. */
    if (total > REDLOCK_MAX_RESOURCE_LEN) {
        cli_error("%s: the resources must be at most %u bytes in all (%zu given)", command,
                  REDLOCK_MAX_RESOURCE_LEN, total);
        return EX_USAGE;
    }
    set->count = n;
    return 0;
}

const char *cli_resources_shown(const cli_resources *set, char *buf, size_t size)
{
    static const char more[] = " and %zu more";
    /* Room kept for " and N more" (N at most 63). */
    const size_t reserve = sizeof(more) + 2;
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < set->count; i++) {
        char one[CLI_SHOWN_SIZE];
        cli_shown(one, sizeof(one), set->names[i]);
        const char *sep = i > 0 ? ", " : "";
        size_t need = strlen(sep) + strlen(one);
        bool last = i + 1 == set->count;
        if (i > 0 && used + need + (last ? 0 : reserve) >= size) {
            snprintf(buf + used, size - used, more, set->count - i);
            break;
        }
        used += (size_t)snprintf(buf + used, size - used, "%s%s", sep, one);
    }
    return buf;
}
