/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --help: a command's row (cli_command.h) as plain text, lines at most
 * HELP_WIDTH wide:
 *
 *   Usage: redlock NAME SYNOPSIS
 *
 *   SUMMARY
 *
 *   Commands:     (redlock's)          Options:
 *     NAME OPERANDS  BRIEF               -s, --long VALUE  HELP
 *
 *   Environment:  (redlock's)
 *     VARIABLE  HELP
 *
 *   Exit status: EXIT_SUMMARY
 *
 *   NOTES         (redlock's)
 *
 * The words are the rows' markup without its marks, wrapped (never inside
 * brackets: a synopsis's "[-t TIME]" stays whole).
 */
#include "cli_command.h"
#include "markup.h"

#include <stdlib.h>
#include <string.h>

#define HELP_WIDTH 79
/* A list's text starts this far in at most; longer labels push it right. */
#define OPTION_COLUMN_MAX 24
#define COMMAND_COLUMN_MAX 38

/* The length of the word at p: up to a space or a newline, but for those
 * in brackets ("[-t TIME]" is one word). */
static size_t word_length(const char *p)
{
    size_t n = 0;
    int depth = 0;
    for (; p[n] != '\0' && (depth > 0 || (p[n] != ' ' && p[n] != '\n')); n++) {
        if (p[n] == '[')
            depth++;
        else if (p[n] == ']' && depth > 0)
            depth--;
    }
    return n;
}

/* words from column col, which the caller reached, wrapping to lines
 * indented by indent; then a newline. */
static void write_words(FILE *out, const char *words, size_t col, size_t indent)
{
    bool first = true;
    const char *p = words;
    for (;;) {
        p += strspn(p, " \n");
        if (*p == '\0')
            break;
        size_t n = word_length(p);
        if (!first && col + 1 + n > HELP_WIDTH) {
            fprintf(out, "\n%*s", (int)indent, "");
            col = indent;
        } else if (!first) {
            fputc(' ', out);
            col++;
        }
        for (size_t i = 0; i < n; i++)
            fputc(p[i] == '\n' ? ' ' : p[i], out);
        col += n;
        p += n;
        first = false;
    }
    fputc('\n', out);
}

/* The markup's plain text, to free; NULL (reported) when out of memory. */
static char *plain_of(const char *markup)
{
    size_t len = strlen(markup);
    char *plain = malloc(len + 1);
    if (plain == NULL)
        cli_error("out of memory");
    else
        markup_plain(markup, len, plain);
    return plain;
}

/* Markup wrapped from column col (after what the caller wrote). */
static void write_markup(FILE *out, const char *markup, size_t col, size_t indent)
{
    char *plain = plain_of(markup);
    if (plain != NULL)
        write_words(out, plain, col, indent);
    free(plain);
}

typedef struct paragraphs {
    FILE *out;
    const char *lead; /* before the first block's words, or NULL */
    bool first;
} paragraphs;

static void write_block(const markup_block *b, void *arg)
{
    paragraphs *p = arg;
    if (!p->first)
        fputc('\n', p->out);
    p->first = false;
    char *text = malloc(b->len + 1);
    if (text == NULL) {
        cli_error("out of memory");
        return;
    }
    memcpy(text, b->text, b->len);
    text[b->len] = '\0';
    char marker[16] = "";
    if (b->kind == MARKUP_BULLET)
        snprintf(marker, sizeof(marker), "- ");
    else if (b->kind == MARKUP_NUMBERED)
        snprintf(marker, sizeof(marker), "%d. ", b->number);
    const char *lead = p->lead != NULL ? p->lead : "";
    p->lead = NULL;
    fprintf(p->out, "%s%s", lead, marker);
    if (b->kind == MARKUP_CODE)
        fprintf(p->out, "%s\n", text);
    else /* an item's lines hang under its text */
        write_markup(p->out, text, strlen(lead) + strlen(marker), strlen(marker));
    free(text);
}

/* Markup blocks, a blank line before each but the first; lead (or NULL)
 * before the first one's words. */
static void write_paragraphs(FILE *out, const char *lead, const char *markup)
{
    paragraphs p = {out, lead, true};
    if (!markup_blocks(markup, write_block, &p))
        cli_error("out of memory");
}

/* ---- Lists: a label, then its text from a common column ----------------- */

typedef struct list_row {
    char label[160]; /* plain text */
    const char *text; /* markup */
} list_row;

static size_t list_column(const list_row *rows, size_t n, size_t max)
{
    size_t column = 0;
    for (size_t i = 0; i < n; i++) {
        size_t wanted = 2 + strlen(rows[i].label) + 2;
        if (wanted <= max && wanted > column)
            column = wanted;
    }
    return column;
}

static void write_list(FILE *out, const char *title, const list_row *rows, size_t n, size_t max)
{
    if (n == 0)
        return;
    size_t column = list_column(rows, n, max);
    fprintf(out, "\n%s\n", title);
    for (size_t i = 0; i < n; i++) {
        size_t col = 2 + strlen(rows[i].label);
        fprintf(out, "  %s", rows[i].label);
        size_t pad = col + 2 <= column ? column - col : 2;
        fprintf(out, "%*s", (int)pad, "");
        write_markup(out, rows[i].text, col + pad, column);
    }
}

/* "-t, --ttl TIME", "--json": the label of an option in lists. */
static void option_label(const cli_option *o, char *buf, size_t size)
{
    char short_form[8] = "";
    if (o->short_name != 0)
        snprintf(short_form, sizeof(short_form), "-%c, ", o->short_name);
    snprintf(buf, size, "%s--%s%s%s", short_form, o->name, o->value ? " " : "",
             o->value ? o->value : "");
}

static void write_options(FILE *out, const cli_command *cmd)
{
    list_row *rows = calloc(cmd->option_count + 1, sizeof(*rows));
    if (rows == NULL) {
        cli_error("out of memory");
        return;
    }
    for (size_t i = 0; i < cmd->option_count; i++) {
        option_label(cmd->options[i], rows[i].label, sizeof(rows[i].label));
        rows[i].text = cmd->options[i]->help;
    }
    write_list(out, "Options:", rows, cmd->option_count, OPTION_COLUMN_MAX);
    free(rows);
}

static void write_commands(FILE *out, const cli_command *tool)
{
    list_row *rows = calloc(tool->command_count + 1, sizeof(*rows));
    if (rows == NULL) {
        cli_error("out of memory");
        return;
    }
    for (size_t i = 0; i < tool->command_count; i++) {
        const cli_command *cmd = tool->commands[i];
        char *operands = plain_of(cmd->operands);
        snprintf(rows[i].label, sizeof(rows[i].label), "%s%s%s", cmd->name,
                 operands && *operands ? " " : "", operands ? operands : "");
        free(operands);
        rows[i].text = cmd->brief;
    }
    write_list(out, "Commands:", rows, tool->command_count, COMMAND_COLUMN_MAX);
    free(rows);
}

/* The entries with help. */
static void write_entries(FILE *out, const char *title, const doc_entry *entries)
{
    size_t n = 0;
    for (const doc_entry *e = entries; e != NULL && e->term != NULL; e++)
        n += e->help != NULL;
    list_row *rows = calloc(n + 1, sizeof(*rows));
    if (rows == NULL) {
        cli_error("out of memory");
        return;
    }
    size_t i = 0;
    for (const doc_entry *e = entries; e != NULL && e->term != NULL; e++) {
        if (e->help == NULL)
            continue;
        char *term = plain_of(e->term);
        snprintf(rows[i].label, sizeof(rows[i].label), "%s", term ? term : "");
        free(term);
        rows[i++].text = e->help;
    }
    write_list(out, title, rows, n, OPTION_COLUMN_MAX);
    free(rows);
}

/* "0 ok, 1 not our lock, ...": each exit status with help. */
static void write_exit_statuses(FILE *out, const doc_entry *entries)
{
    if (entries == NULL)
        return;
    size_t size = 2;
    for (const doc_entry *e = entries; e->term != NULL; e++)
        if (e->help != NULL)
            size += strlen(e->term) + 1 + strlen(e->help) + 2;
    char *text = malloc(size);
    if (text == NULL) {
        cli_error("out of memory");
        return;
    }
    size_t len = 0;
    for (const doc_entry *e = entries; e->term != NULL; e++)
        if (e->help != NULL)
            len += (size_t)snprintf(text + len, size - len, "%s%s %s", len ? ", " : "", e->term,
                                    e->help);
    snprintf(text + len, size - len, ".");
    write_paragraphs(out, "Exit status: ", text);
    free(text);
}

void cli_operand_names(const cli_command *cmd, char *buf, size_t size)
{
    size_t len = strlen(cmd->operands);
    if (len == 0)
        snprintf(buf, size, "no operands");
    else if (len < size)
        markup_plain(cmd->operands, len, buf);
    else
        snprintf(buf, size, "its operands");
}

bool cli_synopsis(const cli_command *cmd, bool long_forms, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < cmd->option_count && len < size; i++) {
        const cli_option *o = cmd->options[i];
        if (o->flags & CLI_OPT_ALONE)
            continue;
        char forms[64];
        if (o->short_name != 0 && long_forms)
            snprintf(forms, sizeof(forms), "`-%c`|`--%s`", o->short_name, o->name);
        else if (o->short_name != 0)
            snprintf(forms, sizeof(forms), "`-%c`", o->short_name);
        else
            snprintf(forms, sizeof(forms), "`--%s`", o->name);
        len += (size_t)snprintf(buf + len, size - len, "[%s%s%s%s]%s ", forms,
                                o->value ? " *" : "", o->value ? o->value : "",
                                o->value ? "*" : "",
                                o->flags & CLI_OPT_REPEATABLE ? "..." : "");
    }
    if (len < size)
        len += (size_t)snprintf(buf + len, size - len, "%s", cmd->operands);
    while (len > 0 && len < size && buf[len - 1] == ' ')
        buf[--len] = '\0';
    return len < size;
}

void cli_help_write(FILE *out, const cli_command *cmd)
{
    char synopsis[512];
    char usage[64];
    cli_synopsis(cmd, false, synopsis, sizeof(synopsis));
    int col = snprintf(usage, sizeof(usage), "Usage: redlock %s%s", cmd->name ? cmd->name : "",
                       cmd->name ? " " : "");
    fputs(usage, out);
    write_markup(out, synopsis, (size_t)col, (size_t)col);
    fputc('\n', out);
    write_paragraphs(out, NULL, cmd->summary);
    write_commands(out, cmd);
    write_options(out, cmd);
    write_entries(out, "Environment:", cmd->environment);
    fputc('\n', out);
    if (cmd->exit_summary != NULL)
        write_paragraphs(out, "Exit status: ", cmd->exit_summary);
    else
        write_exit_statuses(out, cmd->exit_statuses);
    if (cmd->notes != NULL) {
        fputc('\n', out);
        write_paragraphs(out, NULL, cmd->notes);
    }
}
