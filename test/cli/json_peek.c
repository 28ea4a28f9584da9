/* Minimal JSON peeking; see json_peek.h. */
#include "json_peek.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    return s;
}

const char *json_value(const char *json, const char *key)
{
    char quoted[128];
    if (snprintf(quoted, sizeof(quoted), "\"%s\"", key) >= (int)sizeof(quoted))
        return NULL;
    for (const char *at = strstr(json, quoted); at != NULL; at = strstr(at + 1, quoted)) {
        const char *colon = skip_space(at + strlen(quoted));
        if (*colon == ':')
            return skip_space(colon + 1);
    }
    return NULL;
}

bool json_int(const char *json, const char *key, long long *out)
{
    const char *v = json_value(json, key);
    if (v == NULL || !(isdigit((unsigned char)*v) || (*v == '-' && isdigit((unsigned char)v[1]))))
        return false;
    char *end;
    long long n = strtoll(v, &end, 10);
    if (*end == '.' || *end == 'e' || *end == 'E')
        return false;
    *out = n;
    return true;
}

bool json_string(const char *json, const char *key, char *buf, size_t buflen)
{
    const char *v = json_value(json, key);
    if (v == NULL || *v != '"')
        return false;
    const char *end = strchr(v + 1, '"');
    if (end == NULL || memchr(v + 1, '\\', (size_t)(end - v - 1)) != NULL ||
        (size_t)(end - v - 1) >= buflen)
        return false;
    memcpy(buf, v + 1, (size_t)(end - v - 1));
    buf[end - v - 1] = '\0';
    return true;
}

bool json_is_one_line_object(const char *text)
{
    size_t n = strlen(text);
    return n >= 3 && text[0] == '{' && text[n - 2] == '}' && text[n - 1] == '\n' &&
           strchr(text, '\n') == text + n - 1;
}
