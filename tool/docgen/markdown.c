/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The manual in Markdown (docs/cli.md): markup is nearly Markdown
 * already; what the Markdown reader could misread (a line starting like a
 * heading or a list, a mark in text) is escaped. Each command's section
 * starts with its --help, as the tool prints it, in a "$ redlock CMD
 * --help" block; the synopsis section ends with redlock's. Links to
 * sections are checked against the headings written.
 */
#include "writer.h"

#include "../markup.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The headings' anchors and the links to them, checked at the end. */
#define MAX_ANCHORS 256
static char *anchors[MAX_ANCHORS];
static size_t anchor_count;
static char *links[MAX_ANCHORS];
static size_t link_count;

static void remember(char **list, size_t *count, char *s)
{
    if (*count == MAX_ANCHORS) {
        doc_fail("more than %d headings or links to sections", MAX_ANCHORS);
        free(s);
        return;
    }
    list[(*count)++] = s;
}

/* GitHub's anchor for a heading: lowercase, spaces as '-', no other
 * punctuation. */
static void heading(FILE *out, const char *level, const char *title)
{
    fprintf(out, "\n%s %s\n", level, title);
    char *anchor = doc_format("#%s", title);
    char *to = anchor + 1;
    for (const char *p = title; *p; p++) {
        if (isalnum((unsigned char)*p) || *p == '-' || *p == '_')
            *to++ = (char)tolower((unsigned char)*p);
        else if (*p == ' ')
            *to++ = '-';
    }
    *to = '\0';
    remember(anchors, &anchor_count, anchor);
}

typedef struct md_out {
    FILE *out;
    bool bol;           /* at the start of a line */
    const char *indent; /* after each newline: an item's continuation */
} md_out;

static void newline(md_out *m)
{
    fputc('\n', m->out);
    fputs(m->indent, m->out);
    m->bol = true;
}

/* Text, escaped where Markdown would read it as markup. */
static void put_text(md_out *m, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        if (ch == '\n') {
            newline(m);
            continue;
        }
        if (m->bol && strchr("#>+-", ch) != NULL) {
            fputc('\\', m->out);
        } else if (m->bol && isdigit((unsigned char)ch)) {
            /* "12. " or "12) " would start a numbered list */
            size_t j = i;
            while (j < len && isdigit((unsigned char)s[j]))
                j++;
            if (j < len && (s[j] == '.' || s[j] == ')')) {
                fwrite(s + i, 1, j - i, m->out);
                fputc('\\', m->out);
                i = j;
                ch = s[j];
            }
        }
        if (strchr("\\`*[<", ch) != NULL)
            fputc('\\', m->out);
        fputc(ch, m->out);
        m->bol = false;
    }
}

static void put_raw(md_out *m, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\n') {
            newline(m);
        } else {
            fputc(s[i], m->out);
            m->bol = false;
        }
    }
}

static void put_span(const markup_span *span, void *arg)
{
    md_out *m = arg;
    switch (span->kind) {
    case MARKUP_TEXT:
        put_text(m, span->text, span->len);
        break;
    case MARKUP_LITERAL: {
        bool ticks = memchr(span->text, '`', span->len) != NULL;
        put_raw(m, ticks ? "`` " : "`", ticks ? 3 : 1);
        put_raw(m, span->text, span->len);
        put_raw(m, ticks ? " ``" : "`", ticks ? 3 : 1);
        break;
    }
    case MARKUP_VARIABLE:
    case MARKUP_STRONG: {
        const char *mark = span->kind == MARKUP_VARIABLE ? "*" : "**";
        put_raw(m, mark, strlen(mark));
        put_text(m, span->text, span->len);
        put_raw(m, mark, strlen(mark));
        break;
    }
    case MARKUP_LINK:
        put_raw(m, "[", 1);
        markup_spans(span->text, span->len, put_span, m);
        put_raw(m, "](", 2);
        put_raw(m, span->target, span->target_len);
        put_raw(m, ")", 1);
        if (span->target_len > 0 && span->target[0] == '#')
            remember(links, &link_count,
                     doc_format("%.*s", (int)span->target_len, span->target));
        break;
    }
}

/* Inline markup; indent after each newline. No newline at the end. */
static void put_markup(FILE *out, const char *markup, size_t len, const char *indent)
{
    md_out m = {out, false, indent};
    markup_spans(markup, len, put_span, &m);
}

typedef struct blocks {
    FILE *out;
    markup_block_kind last;
    bool any;
} blocks;

static void put_block(const markup_block *b, void *arg)
{
    blocks *bs = arg;
    FILE *out = bs->out;
    /* Items of one list go without blank lines between them. */
    bool same_list = bs->any && b->kind == bs->last &&
                     (b->kind == MARKUP_BULLET || b->kind == MARKUP_NUMBERED);
    if (!same_list)
        fputc('\n', out);
    bs->any = true;
    bs->last = b->kind;
    char marker[16] = "";
    const char *indent = "";
    switch (b->kind) {
    case MARKUP_CODE:
        fprintf(out, "```%.*s\n%.*s\n```\n", (int)b->info_len, b->info, (int)b->len, b->text);
        return;
    case MARKUP_BULLET:
        snprintf(marker, sizeof(marker), "- ");
        indent = "  ";
        break;
    case MARKUP_NUMBERED:
        snprintf(marker, sizeof(marker), "%d. ", b->number);
        indent = "   ";
        break;
    case MARKUP_PARAGRAPH:
        break;
    }
    fputs(marker, out);
    put_markup(out, b->text, b->len, indent);
    fputc('\n', out);
}

static void md_text(FILE *out, const char *markup)
{
    blocks bs = {out, MARKUP_PARAGRAPH, false};
    if (!markup_blocks(markup, put_block, &bs))
        doc_fail("out of memory");
}

static void md_begin(FILE *out, const doc_manual *m)
{
    fprintf(out,
            "<!-- Generated from tool/commands.c and tool/manual.c by tool/docgen: do not edit;\n"
            "     cmake --build BUILD --target update-docs copies it here. -->\n"
            "# %s(1)\n\n`%s` - ",
            m->name, m->name);
    put_markup(out, m->whatis, strlen(m->whatis), "");
    fputs(".\n", out);
}

static void md_section(FILE *out, const char *title)
{
    heading(out, "##", title);
}

static void md_subsection(FILE *out, const char *title)
{
    heading(out, "###", title);
}

/* Lines of a definition at most this wide, where they can be broken. */
#define WRAP_WIDTH 78

/* Whether a line of Markdown may start with ch: not a digit nor a mark
 * that starts a block ("- ", "1. ", "#", ">", ": " a definition). */
static bool may_start_line(char ch)
{
    return !isdigit((unsigned char)ch) && strchr("-+#>=|:", ch) == NULL;
}

/* markup with spaces turned into newlines where lines (their first from
 * column col, the others from indent) would be wider than WRAP_WIDTH; to
 * free. A break inside `literal` is a space to Markdown, too. */
static char *wrapped(const char *markup, size_t col, size_t indent)
{
    char *s = doc_format("%s", markup);
    char *word = s;
    while (*word != '\0') {
        char *space = strchr(word, ' ');
        size_t len = space ? (size_t)(space - word) : strlen(word);
        col += len;
        if (space == NULL)
            break;
        size_t next = strcspn(space + 1, " ");
        if (col + 1 + next > WRAP_WIDTH && may_start_line(space[1])) {
            *space = '\n';
            col = indent;
        } else {
            col++;
        }
        word = space + 1;
    }
    return s;
}

static void md_definitions(FILE *out, const doc_item *items, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        fputc('\n', out);
        put_markup(out, items[i].term, strlen(items[i].term), "");
        fputs("\n: ", out);
        char *text = wrapped(items[i].text, 2, 2);
        put_markup(out, text, strlen(text), "  ");
        free(text);
        fputc('\n', out);
    }
}

/* A table cell: one line, '|' escaped. */
static void put_cell(FILE *out, const char *markup)
{
    char *cell = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&cell, &size);
    if (mem == NULL) {
        doc_fail("out of memory");
        return;
    }
    put_markup(mem, markup, strlen(markup), "");
    if (fclose(mem) != 0) {
        doc_fail("out of memory");
        free(cell);
        return;
    }
    fputc(' ', out);
    for (const char *p = cell; *p; p++) {
        if (*p == '|')
            fputs("\\|", out);
        else
            fputc(*p == '\n' ? ' ' : *p, out);
    }
    fputs(" |", out);
    free(cell);
}

static void md_table(FILE *out, const char *headers, const doc_item *items, size_t count)
{
    const char *bar = strchr(headers, '|');
    if (bar == NULL) {
        doc_fail("table headers without '|': %s", headers);
        return;
    }
    fprintf(out, "\n| %.*s | %s |\n|%s:|%s|\n", (int)(bar - headers), headers, bar + 1,
            "-------", "---------");
    for (size_t i = 0; i < count; i++) {
        fputc('|', out);
        put_cell(out, items[i].term);
        put_cell(out, items[i].text);
        fputc('\n', out);
    }
}

/* What `redlock ARGS --help` prints, as a block that says so. */
static void put_help(FILE *out, const cli_command *cmd)
{
    fprintf(out, "\n```text\n$ redlock %s%s--help\n", cmd->name ? cmd->name : "",
            cmd->name ? " " : "");
    cli_help_write(out, cmd);
    fputs("```\n", out);
}

static void put_synopsis(FILE *out, const char *name, const char *markup)
{
    char *plain = doc_plain(markup);
    fprintf(out, "%s %s\n", name, plain);
    free(plain);
}

static void md_synopsis(FILE *out, const cli_command *tool)
{
    fputs("\n```text\n", out);
    doc_each_synopsis(out, tool, put_synopsis);
    fputs("```\n", out);
    put_help(out, tool);
}

static void md_command(FILE *out, const cli_command *cmd)
{
    md_subsection(out, cmd->name);
    put_help(out, cmd);
    if (cmd->details != NULL)
        md_text(out, cmd->details);
}

static void md_end(FILE *out)
{
    (void)out;
    for (size_t i = 0; i < link_count; i++) {
        bool found = false;
        for (size_t k = 0; k < anchor_count && !found; k++)
            found = strcmp(links[i], anchors[k]) == 0;
        if (!found)
            doc_fail("a link to %s, which no heading has", links[i]);
    }
    for (size_t i = 0; i < link_count; i++)
        free(links[i]);
    for (size_t i = 0; i < anchor_count; i++)
        free(anchors[i]);
    link_count = anchor_count = 0;
}

const doc_writer doc_markdown = {
    .format = "Markdown",
    .begin = md_begin,
    .section = md_section,
    .subsection = md_subsection,
    .text = md_text,
    .definitions = md_definitions,
    .table = md_table,
    .synopsis = md_synopsis,
    .command = md_command,
    .end = md_end,
};
