/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The markup of the tool's documentation (commands.c, manual.c): a small
 * part of Markdown, which --help shows as plain text (help.c) and the
 * generator writes as roff and as Markdown (docgen/).
 *
 * Blocks, separated by blank lines; a line's leading spaces do not count
 * (but in code):
 *   lines of text          a paragraph
 *   "- " ...               a bulleted item (each such line starts one)
 *   "1. " ...              a numbered item (each such line starts one)
 *   "```INFO" ... "```"    lines shown as they are (INFO: their language)
 * Spans, within the other blocks:
 *   `literal`              what is typed or shown as is: commands, options,
 *                          files, values (nothing is markup inside)
 *   *VARIABLE*             what stands for something else (RESOURCE)
 *   **strong**             a lead-in
 *   [text](target)         a link: a Markdown file of docs/, or #section
 *                          (a heading's anchor); its text is markup
 *   \c                     the character c as it is (\*, \`, \[, \\)
 * A mark without its end is text.
 */
#ifndef REDLOCK_CLI_MARKUP_H
#define REDLOCK_CLI_MARKUP_H

#include <stdbool.h>
#include <stddef.h>

typedef enum markup_span_kind {
    MARKUP_TEXT,     /* words as they are */
    MARKUP_LITERAL,  /* `literal` */
    MARKUP_VARIABLE, /* *VARIABLE* */
    MARKUP_STRONG,   /* **strong** */
    MARKUP_LINK,     /* [text](target) */
} markup_span_kind;

typedef struct markup_span {
    markup_span_kind kind;
    const char *text; /* without the marks; a link's text is markup */
    size_t len;
    const char *target; /* MARKUP_LINK: its target */
    size_t target_len;
} markup_span;

/* Call fn for each span of text[0, len), in order. */
void markup_spans(const char *text, size_t len,
                  void (*fn)(const markup_span *span, void *arg), void *arg);

typedef enum markup_block_kind {
    MARKUP_PARAGRAPH,
    MARKUP_BULLET,
    MARKUP_NUMBERED,
    MARKUP_CODE,
} markup_block_kind;

typedef struct markup_block {
    markup_block_kind kind;
    const char *text; /* its lines, joined by \n (no \n after the last);
                         an item's without its marker */
    size_t len;
    int number;       /* MARKUP_NUMBERED: its number */
    const char *info; /* MARKUP_CODE: the words after ``` ("" if none) */
    size_t info_len;
} markup_block;

/* Call fn for each block of text, in order. false when out of memory
 * (and fn was not called). */
bool markup_blocks(const char *text, void (*fn)(const markup_block *block, void *arg),
                   void *arg);

/* text[0, len) as plain text: the spans' words without their marks, a
 * link's text without its target. out needs len + 1 bytes (the plain text
 * is never longer); returns its length. */
size_t markup_plain(const char *text, size_t len, char *out);

#endif
