/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading the documentation's markup (markup.h): spans, blocks, plain text. */
#include "markup.h"

#include <stdlib.h>
#include <string.h>

/* The first "close" in [from, end), or NULL. */
static const char *find(const char *from, const char *end, const char *close)
{
    size_t n = strlen(close);
    for (const char *p = from; p + n <= end; p++)
        if (memcmp(p, close, n) == 0)
            return p;
    return NULL;
}

/* The span starting with the mark at p (< end), if it is closed: its kind,
 * text and where it ends. */
static bool marked_span(const char *p, const char *end, markup_span *span, const char **after)
{
    const char *close;
    if (*p == '`' && (close = find(p + 1, end, "`")) != NULL) {
        *span = (markup_span){MARKUP_LITERAL, p + 1, (size_t)(close - p - 1), NULL, 0};
        *after = close + 1;
        return true;
    }
    if (p + 1 < end && p[0] == '*' && p[1] == '*' && (close = find(p + 2, end, "**")) != NULL) {
        *span = (markup_span){MARKUP_STRONG, p + 2, (size_t)(close - p - 2), NULL, 0};
        *after = close + 2;
        return true;
    }
    if (*p == '*' && (close = find(p + 1, end, "*")) != NULL) {
        *span = (markup_span){MARKUP_VARIABLE, p + 1, (size_t)(close - p - 1), NULL, 0};
        *after = close + 1;
        return true;
    }
    if (*p == '[' && (close = find(p + 1, end, "]")) != NULL && close + 1 < end &&
        close[1] == '(') {
        const char *target_end = find(close + 2, end, ")");
        if (target_end != NULL) {
            *span = (markup_span){MARKUP_LINK, p + 1, (size_t)(close - p - 1), close + 2,
                                  (size_t)(target_end - close - 2)};
            *after = target_end + 1;
            return true;
        }
    }
    return false;
}

void markup_spans(const char *text, size_t len,
                  void (*fn)(const markup_span *span, void *arg), void *arg)
{
    const char *end = text + len;
    const char *plain = text; /* start of the text not yet passed on */
    const char *p = text;
    while (p < end) {
        markup_span span;
        const char *after = NULL;
        bool escaped = *p == '\\' && p + 1 < end;
        if (!escaped && !((*p == '`' || *p == '*' || *p == '[') &&
                          marked_span(p, end, &span, &after))) {
            p++;
            continue;
        }
        if (p > plain)
            fn(&(markup_span){MARKUP_TEXT, plain, (size_t)(p - plain), NULL, 0}, arg);
        if (escaped) {
            span = (markup_span){MARKUP_TEXT, p + 1, 1, NULL, 0};
            after = p + 2;
        }
        fn(&span, arg);
        p = plain = after;
    }
    if (end > plain)
        fn(&(markup_span){MARKUP_TEXT, plain, (size_t)(end - plain), NULL, 0}, arg);
}

/* ---- Blocks ------------------------------------------------------------ */

typedef struct block_reader {
    markup_block block;
    bool open;
    char *buf; /* the block's lines: never more than the whole text */
    size_t len;
    size_t lines;
    void (*fn)(const markup_block *block, void *arg);
    void *arg;
} block_reader;

static void flush(block_reader *r)
{
    if (r->open) {
        r->buf[r->len] = '\0';
        r->block.text = r->buf;
        r->block.len = r->len;
        r->fn(&r->block, r->arg);
    }
    r->open = false;
    r->len = 0;
    r->lines = 0;
}

static void start(block_reader *r, markup_block_kind kind)
{
    flush(r);
    r->block = (markup_block){.kind = kind, .info = ""};
    r->open = true;
}

/* A line (without its newline) to the block: its text has room, being a
 * part of the text, with newlines between lines as there. */
static void add_line(block_reader *r, const char *line, size_t n)
{
    if (r->lines++ > 0)
        r->buf[r->len++] = '\n';
    memcpy(r->buf + r->len, line, n);
    r->len += n;
}

/* "N. " at s: the number, and where the item's text starts; else -1. */
static int item_number(const char *s, size_t n, size_t *text_at)
{
    size_t i = 0;
    int number = 0;
    for (; i < n && i < 4 && s[i] >= '0' && s[i] <= '9'; i++)
        number = number * 10 + (s[i] - '0');
    if (i == 0 || i + 1 >= n || s[i] != '.' || s[i + 1] != ' ')
        return -1;
    *text_at = i + 2;
    return number;
}

bool markup_blocks(const char *text, void (*fn)(const markup_block *block, void *arg),
                   void *arg)
{
    block_reader r = {.fn = fn, .arg = arg, .buf = malloc(strlen(text) + 1)};
    if (r.buf == NULL)
        return false;
    const char *line = text;
    while (*line != '\0') {
        size_t n = strcspn(line, "\n");
        const char *next = line[n] == '\n' ? line + n + 1 : line + n;
        size_t indent = strspn(line, " ");
        const char *s = line + indent;
        size_t len = n > indent ? n - indent : 0;
        size_t item_at = 0;
        int number;
        if (r.open && r.block.kind == MARKUP_CODE) {
            if (len == 3 && memcmp(s, "```", 3) == 0)
                flush(&r);
            else
                add_line(&r, line, n);
        } else if (len == 0) {
            flush(&r);
        } else if (len >= 3 && memcmp(s, "```", 3) == 0) {
            start(&r, MARKUP_CODE);
            r.block.info = s + 3;
            r.block.info_len = len - 3;
        } else if (len >= 2 && s[0] == '-' && s[1] == ' ') {
            start(&r, MARKUP_BULLET);
            add_line(&r, s + 2, len - 2);
        } else if ((number = item_number(s, len, &item_at)) >= 0) {
            start(&r, MARKUP_NUMBERED);
            r.block.number = number;
            add_line(&r, s + item_at, len - item_at);
        } else {
            if (!r.open)
                start(&r, MARKUP_PARAGRAPH);
            add_line(&r, s, len);
        }
        line = next;
    }
    flush(&r);
    free(r.buf);
    return true;
}

/* ---- Plain text ---------------------------------------------------------- */

typedef struct plain_writer {
    char *out;
    size_t len;
} plain_writer;

static void plain_span(const markup_span *span, void *arg)
{
    plain_writer *w = arg;
    if (span->kind == MARKUP_LINK) {
        markup_spans(span->text, span->len, plain_span, w);
        return;
    }
    memcpy(w->out + w->len, span->text, span->len);
    w->len += span->len;
}

size_t markup_plain(const char *text, size_t len, char *out)
{
    plain_writer w = {out, 0};
    markup_spans(text, len, plain_span, &w);
    out[w.len] = '\0';
    return w.len;
}
