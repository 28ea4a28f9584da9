/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tool's manual (manual.c): lists of entries, whose words are markup
 * (markup.h), which redlock --help shows in part.
 */
#ifndef REDLOCK_CLI_MANUAL_H
#define REDLOCK_CLI_MANUAL_H

#include <stddef.h>

/* An entry of a list: an environment variable, an exit status, a file.
 * Lists end with an entry whose term is NULL. */
typedef struct doc_entry {
    const char *term;
    const char *help;    /* what redlock --help says of it (a phrase), or NULL:
                            not there; the manual starts with it too */
    const char *details; /* what the manual says (one paragraph), or NULL */
} doc_entry;

/* What redlock --help lists too (the entries with help). */
extern const doc_entry cli_environment[];
extern const doc_entry cli_exit_statuses[];

#endif
