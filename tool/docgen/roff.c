/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The manual as a man page (man(7) macros, groff's .SY/.YS for synopses).
 * Markup becomes: `literal` and **strong** bold, *VARIABLE* italic, a link
 * its text (a link to a section, the section's name in capitals, bold).
 * Escaped: backslashes, a '.' or '\'' starting a line, and a '-' that is
 * typed (in literals and code, or before a digit: \- is the ASCII
 * hyphen-minus a reader may copy). Words that start a literal are not
 * hyphenated.
 */
#include "writer.h"

#include "../markup.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct roff_out {
    FILE *out;
    bool bol;      /* at the start of a line */
    bool synopsis; /* spaces in brackets do not break: "[-t TIME]" */
    int brackets;  /* how many are open */
    bool word;     /* in a word: what comes next is not a word's start */
} roff_out;

/* \% at the start of a word keeps it whole (elsewhere it would be a place
 * to hyphenate): a command or a file is not hyphenated. */
static void keep_whole(roff_out *r)
{
    if (!r->word)
        fputs("\\%", r->out);
}

/* One character of text; literal: typed as is (literals, code). */
static void put_char(roff_out *r, const char *p, const char *end, bool literal)
{
    char ch = *p;
    bool digit_next = p + 1 < end && isdigit((unsigned char)p[1]);
    if (r->bol && (ch == '.' || ch == '\''))
        fputs("\\&", r->out);
    r->bol = ch == '\n';
    r->word = ch != ' ' && ch != '\n';
    if (r->synopsis && !literal) {
        r->brackets += ch == '[' ? 1 : ch == ']' && r->brackets > 0 ? -1 : 0;
        if (ch == ' ' && r->brackets > 0) {
            fputs("\\ ", r->out);
            return;
        }
    }
    switch (ch) {
    case '\\':
        fputs("\\e", r->out);
        break;
    case '-':
        fputs(literal || digit_next ? "\\-" : "-", r->out);
        break;
    case '\'':
        fputs(literal ? "\\(aq" : "'", r->out);
        break;
    case '`':
        fputs("\\(ga", r->out);
        break;
    case '^':
        fputs("\\(ha", r->out);
        break;
    case '~':
        fputs("\\(ti", r->out);
        break;
    default:
        fputc(ch, r->out);
    }
}

static void put_text(roff_out *r, const char *s, size_t len, bool literal)
{
    for (const char *p = s; p < s + len; p++)
        put_char(r, p, s + len, literal);
}

static void put_span(const markup_span *span, void *arg)
{
    roff_out *r = arg;
    switch (span->kind) {
    case MARKUP_TEXT:
        put_text(r, span->text, span->len, false);
        break;
    case MARKUP_LITERAL:
        fputs("\\fB", r->out);
        for (const char *p = span->text; p < span->text + span->len; p++) {
            keep_whole(r);
            put_char(r, p, span->text + span->len, true);
        }
        fputs("\\fR", r->out);
        r->bol = false;
        break;
    case MARKUP_VARIABLE:
    case MARKUP_STRONG:
        fputs(span->kind == MARKUP_VARIABLE ? "\\fI" : "\\fB", r->out);
        put_text(r, span->text, span->len, false);
        fputs("\\fR", r->out);
        r->bol = false;
        break;
    case MARKUP_LINK:
        if (span->target_len > 0 && span->target[0] == '#') {
            char *upper = doc_format("%.*s", (int)span->len, span->text);
            for (char *p = upper; *p; p++)
                *p = (char)toupper((unsigned char)*p);
            fputs("\\fB", r->out);
            put_text(r, upper, strlen(upper), false);
            fputs("\\fR", r->out);
            r->bol = false;
            free(upper);
        } else {
            markup_spans(span->text, span->len, put_span, r);
        }
        break;
    }
}

/* Inline markup, then a newline. */
static void put_markup(FILE *out, const char *markup, size_t len)
{
    roff_out r = {out, true, false, 0, false};
    markup_spans(markup, len, put_span, &r);
    fputc('\n', out);
}

static void put_code(FILE *out, const char *text, size_t len)
{
    fputs(".PP\n.RS 4\n.nf\n", out);
    roff_out r = {out, true, false, 0, false};
    const char *end = text + len;
    for (const char *line = text; line <= end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *stop = nl ? nl : end;
        if (stop == line)
            fputs("\\&", out); /* an empty line, kept */
        r.bol = true;
        put_text(&r, line, (size_t)(stop - line), true);
        fputc('\n', out);
        line = stop + 1;
    }
    fputs(".fi\n.RE\n", out);
}

static void put_block(const markup_block *b, void *arg)
{
    FILE *out = arg;
    switch (b->kind) {
    case MARKUP_PARAGRAPH:
        fputs(".PP\n", out);
        put_markup(out, b->text, b->len);
        break;
    case MARKUP_BULLET:
        fputs(".IP \\(bu 2\n", out);
        put_markup(out, b->text, b->len);
        break;
    case MARKUP_NUMBERED:
        fprintf(out, ".IP %d. 4\n", b->number);
        put_markup(out, b->text, b->len);
        break;
    case MARKUP_CODE:
        put_code(out, b->text, b->len);
        break;
    }
}

static void roff_text(FILE *out, const char *markup)
{
    if (!markup_blocks(markup, put_block, out))
        doc_fail("out of memory");
}

static void roff_begin(FILE *out, const doc_manual *m)
{
    char upper[64];
    snprintf(upper, sizeof(upper), "%s", m->name);
    for (char *p = upper; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    fprintf(out,
            ".\\\" SPDX-License-Identifier: BSD-3-Clause\n"
            ".\\\" Manual page for %s(1), the command-line tool of libredlock.\n"
            ".\\\" Generated from tool/commands.c and tool/manual.c by tool/docgen: do not\n"
            ".\\\" edit; cmake --build BUILD --target update-docs copies it here.\n"
            ".\\\" The same in Markdown: docs/cli.md. View it with: man -l man/%s.1\n"
            ".TH %s 1 %s \"libredlock %s\" \"User Commands\"\n"
            ".SH NAME\n",
            m->name, m->name, upper, m->date, REDLOCK_VERSION_STRING);
    fprintf(out, "%s \\- ", m->name);
    put_markup(out, m->whatis, strlen(m->whatis));
}

static void roff_section(FILE *out, const char *title)
{
    fputs(".SH ", out);
    for (const char *p = title; *p; p++)
        fputc(toupper((unsigned char)*p), out);
    fputc('\n', out);
}

static void roff_subsection(FILE *out, const char *title)
{
    fprintf(out, ".SS %s\n", title);
}

static void roff_definitions(FILE *out, const doc_item *items, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        fputs(".TP\n", out);
        put_markup(out, items[i].term, strlen(items[i].term));
        put_markup(out, items[i].text, strlen(items[i].text));
    }
}

static void roff_table(FILE *out, const char *headers, const doc_item *items, size_t count)
{
    (void)headers; /* a list of entries, as man pages show such tables */
    roff_definitions(out, items, count);
}

/* .SY NAME / SYNOPSIS / .YS */
static void put_synopsis(FILE *out, const char *name, const char *markup)
{
    fprintf(out, ".SY \"%s\"\n", name);
    roff_out r = {out, true, true, 0, false};
    markup_spans(markup, strlen(markup), put_span, &r);
    fputs("\n.YS\n", out);
}

static void roff_synopsis(FILE *out, const cli_command *tool)
{
    doc_each_synopsis(out, tool, put_synopsis);
}

static void roff_command(FILE *out, const cli_command *cmd)
{
    roff_subsection(out, cmd->name);
    char *name = doc_format("redlock %s", cmd->name);
    char *line = doc_synopsis(cmd, true);
    put_synopsis(out, name, line);
    free(line);
    free(name);
    roff_text(out, cmd->summary);
    char *exits = doc_format("Exit status: %s", cmd->exit_summary);
    roff_text(out, exits);
    free(exits);
    if (cmd->details != NULL)
        roff_text(out, cmd->details);
}

static void roff_end(FILE *out)
{
    (void)out;
}

const doc_writer doc_roff = {
    .format = "roff",
    .begin = roff_begin,
    .section = roff_section,
    .subsection = roff_subsection,
    .text = roff_text,
    .definitions = roff_definitions,
    .table = roff_table,
    .synopsis = roff_synopsis,
    .command = roff_command,
    .end = roff_end,
};
