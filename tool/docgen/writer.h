/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generator of the tool's manual (gen_docs.c) walks the manual
 * (manual.h) once for each format and hands every piece to a writer:
 * roff for redlock(1) (roff.c), Markdown for docs/cli.md (markdown.c).
 * What the pieces say is the same for both; how each is shown is the
 * writer's.
 */
#ifndef REDLOCK_DOCGEN_WRITER_H
#define REDLOCK_DOCGEN_WRITER_H

#include "../cli_command.h"

#include <stdio.h>

/* An entry as the writers get it: a term and its text (markup). */
typedef struct doc_item {
    char *term;
    char *text;
} doc_item;

typedef struct doc_writer {
    const char *format; /* for messages */
    /* The file's start: what it is, the program's name and what it does. */
    void (*begin)(FILE *out, const doc_manual *manual);
    void (*section)(FILE *out, const char *title);
    void (*subsection)(FILE *out, const char *title);
    void (*text)(FILE *out, const char *markup); /* markup blocks */
    void (*definitions)(FILE *out, const doc_item *items, size_t count);
    void (*table)(FILE *out, const char *headers, const doc_item *items, size_t count);
    /* The synopsis of redlock and of each of its commands. */
    void (*synopsis)(FILE *out, const cli_command *tool);
    /* One command: its help and its details. */
    void (*command)(FILE *out, const cli_command *cmd);
    /* The file's end: checks across it. */
    void (*end)(FILE *out);
} doc_writer;

extern const doc_writer doc_roff;
extern const doc_writer doc_markdown;

/* For the writers (gen_docs.c). */

/* Report a problem: the generation fails (the file is not written). */
void doc_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A formatted string to free; exits when out of memory. */
char *doc_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The markup of cmd's options and operands in its synopsis (cli_synopsis()),
 * to free. */
char *doc_synopsis(const cli_command *cmd, bool long_forms);
/* The synopsis of one of redlock's options used alone (CLI_OPT_ALONE),
 * after "redlock " (markup, to free): `--version`; `--help` | *COMMAND*
 * `--help` for its help. */
char *doc_alone_synopsis(const cli_option *option);
/* Every synopsis line in order (redlock's, each command's, each option used
 * alone), each given to put(out, name, markup): name is "redlock" or
 * "redlock COMMAND", markup what follows it. */
void doc_each_synopsis(FILE *out, const cli_command *tool,
                       void (*put)(FILE *out, const char *name, const char *markup));
/* markup's plain text, to free. */
char *doc_plain(const char *markup);

#endif
