/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Durations as timeout(1) and systemd write them (systemd.time(7)): a bare
 * number of seconds ("2", "1.5"), or numbers each with a unit us, ms, s,
 * m (min), h or d, summed ("250ms", "1m30s", "1h 30min"). The one parser
 * of the YAML config's duration keys (config_yaml.c) and of the tool's
 * TIME arguments (tool/durations.c): pure functions, no library state, so
 * the tool, which links the public API only, compiles them in as well.
 */
#ifndef REDLOCK_UTIL_DURATION_H
#define REDLOCK_UTIL_DURATION_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* rl_duration_parse()'s failures. */
#define RL_DURATION_INVALID (-1)  /* not a duration */
#define RL_DURATION_RANGE (-2)    /* outside [min, max] once rounded */
#define RL_DURATION_TOO_FINE (-3) /* above zero but below 1 ms */

#define RL_NS_PER_MS INT64_C(1000000)

/* Nanoseconds in a unit, as systemd.time(7) names them; 0 for anything else. */
static inline int64_t rl_duration_unit_ns(const char *unit, size_t len)
{
    static const struct {
        const char *name;
        int64_t ns;
    } units[] = {
        {"us", INT64_C(1000)},           {"usec", INT64_C(1000)},
        {"ms", RL_NS_PER_MS},               {"msec", RL_NS_PER_MS},
        {"s", 1000 * RL_NS_PER_MS},         {"sec", 1000 * RL_NS_PER_MS},
        {"m", 60000 * RL_NS_PER_MS},        {"min", 60000 * RL_NS_PER_MS},
        {"h", 3600000 * RL_NS_PER_MS},      {"hr", 3600000 * RL_NS_PER_MS},
        {"d", 86400000 * RL_NS_PER_MS},
    };
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strlen(units[i].name) == len && memcmp(unit, units[i].name, len) == 0)
            return units[i].ns;
    return 0;
}

static inline bool rl_duration_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Past spaces and tabs. */
static inline const char *rl_duration_blanks(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* The fraction's digits (count of them) times unit, in whole units of
 * unit / 10^count: multiplied as a decimal, right to left, so that no digit
 * is lost however many are written; *inexact when anything is left below. */
static inline int64_t rl_duration_fraction(const char *digits, size_t count, int64_t unit,
                                           bool *inexact)
{
    int64_t carry = 0;
    for (size_t i = count; i-- > 0;) {
        carry += (digits[i] - '0') * unit; /* < 10 * unit + unit */
        *inexact |= carry % 10 != 0;
        carry /= 10;
    }
    return carry;
}

/*
 * One component at *p, DIGITS[.DIGITS][blanks]UNIT (or a bare number,
 * seconds, when it is the whole text), added to *total_ns. The integer
 * part is scaled by the unit exactly, the fraction to whole nanoseconds,
 * with *inexact set when anything was left below them (rounding to the
 * millisecond is exact all the same: a remainder below a nanosecond cannot
 * reach a half).
 */
static inline int rl_duration_component(const char **p, bool alone, int64_t *total_ns,
                                        bool *inexact)
{
    const char *start = *p;
    const char *q = start;
    bool too_big = false;
    int64_t whole = 0;
    for (; rl_duration_digit(*q); q++) {
        if (whole > (INT64_MAX - (*q - '0')) / 10)
            too_big = true;
        else
            whole = whole * 10 + (*q - '0');
    }
    size_t int_digits = (size_t)(q - start);
    const char *fraction = NULL;
    size_t frac_digits = 0;
    if (*q == '.') {
        fraction = ++q;
        for (; rl_duration_digit(*q); q++)
            frac_digits++;
        if (frac_digits == 0)
            return RL_DURATION_INVALID; /* "1." */
    }
    if (int_digits + frac_digits == 0)
        return RL_DURATION_INVALID;
    const char *unit_start = rl_duration_blanks(q);
    const char *unit_end = unit_start;
    while ((*unit_end >= 'a' && *unit_end <= 'z') || (*unit_end >= 'A' && *unit_end <= 'Z'))
        unit_end++;
    int64_t unit;
    if (unit_end == unit_start) {
        if (!alone || *unit_start != '\0')
            return RL_DURATION_INVALID; /* "1m30": a unit on every part */
        unit = 1000 * RL_NS_PER_MS;     /* a bare number: seconds */
    } else {
        unit = rl_duration_unit_ns(unit_start, (size_t)(unit_end - unit_start));
        if (unit == 0)
            return RL_DURATION_INVALID;
    }
    if (too_big || whole > INT64_MAX / unit)
        return RL_DURATION_RANGE;
    int64_t carry = rl_duration_fraction(fraction, frac_digits, unit, inexact);
    int64_t value = whole * unit;
    if (value > INT64_MAX - carry || value + carry > INT64_MAX - *total_ns)
        return RL_DURATION_RANGE;
    *total_ns += value + carry;
    *p = unit_end;
    return 0;
}

/*
 * A duration as timeout(1) and systemd write it: a bare number of seconds,
 * or numbers each with a unit, summed ("1m30s", "1h 30min"). Nanoseconds
 * are counted, then rounded to the nearest millisecond, halves up; one
 * above zero but below 1 ms is too fine for us, not 0. Returns 0 with *ms
 * in [min, max], or an RL_DURATION_* failure (*ms untouched).
 */
static inline int rl_duration_parse(const char *text, int64_t min, int64_t max,
                                    int64_t *ms)
{
    if (text == NULL)
        return RL_DURATION_INVALID;
    const char *lead = text[0] == '.' ? text + 1 : text;
    if (!rl_duration_digit(*lead))
        return RL_DURATION_INVALID; /* no sign, no leading blank */
    bool alone = true;
    for (const char *p = text; *p; p++)
        if (!rl_duration_digit(*p) && *p != '.') {
            alone = false;
            break;
        }
    int64_t total_ns = 0;
    bool inexact = false;
    const char *p = text;
    while (*p != '\0') {
        int rc = rl_duration_component(&p, alone, &total_ns, &inexact);
        if (rc != 0)
            return rc;
        const char *next = rl_duration_blanks(p);
        if (next != p && *next == '\0')
            return RL_DURATION_INVALID; /* "5s ": no trailing blank */
        p = next;
    }
    int64_t value = total_ns / RL_NS_PER_MS + (total_ns % RL_NS_PER_MS >= RL_NS_PER_MS / 2 ? 1 : 0);
    if (total_ns < RL_NS_PER_MS && (total_ns > 0 || inexact))
        return RL_DURATION_TOO_FINE;
    /* Counted in nanoseconds, so the milliseconds must be too: rounding up
     * just below INT64_MAX ns gives one that "Nms" could not be read back. */
    if (value > INT64_MAX / RL_NS_PER_MS || value < min || value > max)
        return RL_DURATION_RANGE;
    *ms = value;
    return 0;
}

#endif
