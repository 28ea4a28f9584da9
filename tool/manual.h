/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tool's manual: the sections of redlock(1) and docs/cli.md, in
 * order (manual.c). Their words are markup (markup.h); the sections about
 * the commands and options are made from the command table (cli_command.h).
 * The generator (docgen/) writes both files from it.
 */
#ifndef REDLOCK_CLI_MANUAL_H
#define REDLOCK_CLI_MANUAL_H

#include <stddef.h>

struct cli_command;

/* An entry of a list: an environment variable, an exit status, a file.
 * Lists end with an entry whose term is NULL. */
typedef struct doc_entry {
    const char *term;
    const char *help;    /* what redlock --help says of it (a phrase), or NULL:
                            not there; the manual starts with it too */
    const char *details; /* what the manual says (one paragraph), or NULL */
} doc_entry;

typedef enum doc_part_kind {
    DOC_TEXT,        /* text: markup blocks */
    DOC_SUBSECTION,  /* text: its title */
    DOC_DEFINITIONS, /* entries: each term, then its help and details */
    DOC_TABLE,       /* entries: each term, then its details (its help is a
                        label for --help); text: the headers, "TERM|DETAILS" */
    DOC_CONFIG_KEYS, /* entries: a line for each key of the config's top level
                        (cli_config_top_keys) or of a node (cli_config_node_keys),
                        shown as DOC_TABLE in the YAML loader's order; text: the
                        headers */
    DOC_SYNOPSIS,    /* the synopsis of redlock and of its commands */
    DOC_COMMANDS,    /* every command: its help and details */
    DOC_OPTIONS,     /* command's options; NULL: those of every command */
} doc_part_kind;

typedef struct doc_part {
    doc_part_kind kind;
    const char *text;
    const doc_entry *entries;
    const struct cli_command *command;
} doc_part;

typedef struct doc_section {
    const char *title; /* as Markdown shows it; the manual page, in capitals */
    const doc_part *parts;
    size_t part_count;
} doc_section;

typedef struct doc_manual {
    const char *name;   /* of the program */
    const char *whatis; /* what it does, for NAME */
    const char *date;   /* of the manual's last change: YYYY-MM-DD */
    const doc_section *sections;
    size_t section_count;
} doc_manual;

extern const doc_manual cli_manual;

/* What redlock --help lists too (the entries with help). */
extern const doc_entry cli_environment[];
extern const doc_entry cli_exit_statuses[];
/* A line for each configuration key (terms: the keys, plain). */
extern const doc_entry cli_config_top_keys[];
extern const doc_entry cli_config_node_keys[];

#endif
