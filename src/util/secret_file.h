/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading a whole file that may hold passwords: bounded in size, and no
 * copy of its bytes left behind in freed memory. */
#ifndef REDLOCK_SECRET_FILE_H
#define REDLOCK_SECRET_FILE_H

#include <stddef.h>

/*
 * Reads the file at path into *text (*len bytes, then a NUL; free it with
 * rl_secret_file_free()), refusing more than max_bytes. On failure *text is
 * NULL and problem holds one line without the path, e.g. "cannot open: No
 * such file or directory". Returns REDLOCK_OK, REDLOCK_ECONFIG, or
 * REDLOCK_ENOMEM ("out of memory").
 */
int rl_secret_file_read(const char *path, size_t max_bytes, char **text, size_t *len,
                        char *problem, size_t problem_len);

/* Wipes text[0..len) and frees it. NULL is allowed. */
void rl_secret_file_free(char *text, size_t len);

#endif
