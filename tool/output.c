/* SPDX-License-Identifier: BSD-3-Clause */
/* What the tool writes as text: error lines, escaped bytes. */
#include "cli.h"

#include <stdarg.h>
#include <string.h>
#include <time.h>

void cli_error(const char *fmt, ...)
{
    va_list ap;
    fputs("redlock: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized): started above
    va_end(ap);
    fputc('\n', stderr);
}

/* Bytes shown as \xNN: controls and non-ASCII, so that what is shown is
 * one line of plain text. */
static bool needs_escape(unsigned char ch)
{
    return ch < 0x20 || ch >= 0x7f;
}

void text_bytes(FILE *out, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (needs_escape(ch) || ch == '\\') /* values read back unambiguously */
            fprintf(out, "\\x%02x", ch);
        else
            fputc(ch, out);
    }
}

const char *cli_shown(char *buf, size_t size, const char *s)
{
    static const char cut[] = "...";
    size_t full = 0;
    for (const char *p = s; *p != '\0'; p++)
        full += needs_escape((unsigned char)*p) ? 4 : 1;
    /* What fits whole, or what fits before the cut mark. */
    size_t room = full < size ? full : size - sizeof(cut);
    size_t used = 0;
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        size_t need = needs_escape(ch) ? 4 : 1;
        if (used + need > room)
            break;
        if (need == 4)
            snprintf(buf + used, size - used, "\\x%02x", ch);
        else
            buf[used] = (char)ch;
        used += need;
    }
    if (full >= size) {
        memcpy(buf + used, cut, sizeof(cut) - 1);
        used += sizeof(cut) - 1;
    }
    buf[used] = '\0';
    return buf;
}

const char *cli_utc_time(char *buf, int64_t unix_ms)
{
    time_t secs = (time_t)(unix_ms / 1000);
    struct tm utc;
    size_t n = 0;
    if (gmtime_r(&secs, &utc) != NULL)
        n = strftime(buf, CLI_TIME_SIZE, "%Y-%m-%dT%H:%M:%S", &utc);
    if (n == 0)
        snprintf(buf, CLI_TIME_SIZE, "%lld ms", (long long)unix_ms);
    else
        snprintf(buf + n, CLI_TIME_SIZE - n, ".%03dZ", (int)(unix_ms % 1000));
    return buf;
}
