/* SPDX-License-Identifier: BSD-3-Clause */
/* Holder metadata carried in a lock's value (docs/design.md, "Who holds a
 * lock"): the random part, then ";h=<host>;p=<pid>;t=<ms>;l=<label>", the
 * label's characters other than letters, digits and "-._~/:,+@" written
 * %XX: a value holds no space, quote or separator a shell or a log line
 * would split it at.
 * Everything compares whole values, so the suffix changes nothing in the
 * protocol; only inspection reads it. */
#ifndef REDLOCK_HOLDER_H
#define REDLOCK_HOLDER_H

#include <stddef.h>

#include "redlock/redlock.h"

/* The longest suffix: the four fields, their tags, the numbers' digits,
 * and the label with every character escaped (%XX). */
#define RL_HOLDER_SUFFIX_MAX (4 * 3 + REDLOCK_MAX_HOST_LEN + 20 + 20 + 3 * REDLOCK_MAX_LABEL_LEN)

/* Whether label is one an acquire takes: 1..REDLOCK_MAX_LABEL_LEN
 * printable ASCII characters. */
bool rl_holder_label_valid(const char *label);

/* Write the suffix for label, this host and process, now, to out (at
 * least RL_HOLDER_SUFFIX_MAX + 1 bytes, NUL-terminated). Its length. */
size_t rl_holder_suffix(char *out, const char *label);

#endif
