/* SPDX-License-Identifier: BSD-3-Clause */
/* What a master is, from its INFO server reply (server_info.h). */
#include "wire/server_info.h"

#include <stdio.h>
#include <string.h>

/* The value of "\nFIELD:" (or FIELD: on the first line) up to its CR or
 * LF, copied into buf when it fits and is made of printable characters;
 * false otherwise. */
static bool info_field(const char *text, size_t len, const char *field, char *buf,
                       size_t size)
{
    size_t flen = strlen(field);
    const char *end = text + len;
    for (const char *line = text; line < end;) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        const char *stop = eol ? eol : end;
        if ((size_t)(stop - line) > flen && memcmp(line, field, flen) == 0 &&
            line[flen] == ':') {
            const char *v = line + flen + 1;
            size_t n = (size_t)(stop - v);
            if (n > 0 && v[n - 1] == '\r')
                n--;
            if (n == 0 || n >= size)
                return false;
            for (size_t i = 0; i < n; i++)
                if (v[i] < 0x21 || v[i] > 0x7e)
                    return false;
            memcpy(buf, v, n);
            buf[n] = '\0';
            return true;
        }
        line = stop + 1;
    }
    return false;
}

/* "MAJOR.MINOR[...]": each 1 to 4 digits. */
static bool version_numbers(const char *v, int *major, int *minor)
{
    int *parts[2] = {major, minor};
    for (int k = 0; k < 2; k++) {
        int n = 0;
        int digits = 0;
        for (; *v >= '0' && *v <= '9' && digits < 4; v++, digits++)
            n = n * 10 + (*v - '0');
        if (digits == 0 || (*v >= '0' && *v <= '9'))
            return false;
        *parts[k] = n;
        if (k == 0 && *v++ != '.')
            return false;
    }
    return true;
}

/* Lower-case letters only: a name we can print and compare. */
static bool plain_name(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s; s++)
        if (*s < 'a' || *s > 'z')
            return false;
    return true;
}

unsigned rl_server_caps(const char *name, int major, int minor)
{
    unsigned caps = 0;
    bool at_least_8_1 = major > 8 || (major == 8 && minor >= 1);
    bool at_least_8_4 = major > 8 || (major == 8 && minor >= 4);
    bool at_least_9_2 = major > 9 || (major == 9 && minor >= 2);
    if (strcmp(name, "valkey") == 0) {
        if (at_least_8_1)
            caps |= RL_CAP_SET_IFEQ;
        if (major >= 9)
            caps |= RL_CAP_DELIFEQ;
        if (at_least_9_2)
            caps |= RL_CAP_DELEX;
    } else if (strcmp(name, "redis") == 0 && at_least_8_4) {
        caps |= RL_CAP_SET_IFEQ | RL_CAP_DELEX;
    }
    return caps;
}

void rl_server_info_read(const redisReply *reply, rl_server_info *out)
{
    out->text[0] = '\0';
    out->caps = 0;
    if (reply == NULL ||
        (reply->type != REDIS_REPLY_STRING && reply->type != REDIS_REPLY_STATUS
#ifdef REDIS_REPLY_VERB
         && reply->type != REDIS_REPLY_VERB
#endif
         ))
        return;
    char name[16] = "redis";
    char version[24];
    bool named = info_field(reply->str, reply->len, "server_name", name, sizeof(name));
    if (named && !plain_name(name))
        return;
    char field[32];
    snprintf(field, sizeof(field), "%s_version", name);
    if (!info_field(reply->str, reply->len, field, version, sizeof(version)))
        return;
    int major = 0;
    int minor = 0;
    if (!version_numbers(version, &major, &minor))
        return;
    snprintf(out->text, sizeof(out->text), "%s %s", name, version);
    out->caps = rl_server_caps(name, major, minor);
}

const char *rl_server_cap_name(unsigned caps)
{
    if (caps & RL_CAP_SET_IFEQ)
        return "SET IFEQ";
    if (caps & RL_CAP_DELIFEQ)
        return "DELIFEQ";
    if (caps & RL_CAP_DELEX)
        return "DELEX";
    return "a script-free command";
}
