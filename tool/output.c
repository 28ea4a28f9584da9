/* Everything the tool writes: error lines, JSON strings, escaped bytes. */
#include "cli.h"

#include <stdarg.h>

void cli_error(const char *fmt, ...)
{
    va_list ap;
    fputs("redlock: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void json_string(FILE *out, const char *s, size_t len)
{
    fputc('"', out);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch == '\n')
            fputs("\\n", out);
        else if (ch < 0x20 || ch == 0x7f)
            fprintf(out, "\\u%04x", ch);
        else
            fputc(ch, out); /* UTF-8 passes through; invalid bytes too, as JSON readers allow */
    }
    fputc('"', out);
}

void text_bytes(FILE *out, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch >= 0x7f || ch == '\\')
            fprintf(out, "\\x%02x", ch);
        else
            fputc(ch, out);
    }
}
