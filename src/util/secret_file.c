/* SPDX-License-Identifier: BSD-3-Clause */
/* Whole-file reads that wipe every copy of the bytes they move or drop. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* explicit_bzero, strerror_l */
#endif

#include "util/secret_file.h"
#include "redlock/redlock.h"
#include "util/message_buffer.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <locale.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RL_SECRET_FILE_FIRST_CAP ((size_t)64 * 1024) /* when the size is unknown */

/* Describes a failure in p (one line) and returns status. */
RL_PRINTF(3, 4)
static int fail(rl_msg_buf *p, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rl_msg_vprintf(p, fmt, ap);
    va_end(ap);
    return status;
}

/* "what: <errno text>", in English whatever the process's locale. */
static int fail_errno(rl_msg_buf *p, const char *what, int err)
{
    locale_t c = newlocale(LC_MESSAGES_MASK, "C", (locale_t)0);
    int rc = fail(p, REDLOCK_ECONFIG, "%s: %s", what, c ? strerror_l(err, c) : "error");
    if (c)
        freelocale(c);
    return rc;
}

void rl_secret_file_free(char *text, size_t len)
{
    if (text == NULL)
        return;
    explicit_bzero(text, len);
    free(text);
}

/* Grows a buffer to cap bytes without leaving a copy of its contents in
 * freed memory. */
static char *grow_wiped(char *buf, size_t used, size_t cap)
{
    char *bigger = cap > 0 ? malloc(cap) : NULL;
    if (bigger == NULL)
        return NULL;
    if (used > 0)
        memcpy(bigger, buf, used);
    rl_secret_file_free(buf, used);
    return bigger;
}

/* Reads fd to its end into *buf (grown from cap, wiped when moved), refusing
 * more than max_bytes. On failure *buf may hold *used bytes. */
static int read_all(rl_msg_buf *p, int fd, size_t max_bytes, size_t cap, char **buf,
                    size_t *used)
{
    for (;;) {
        if (*used == cap || *buf == NULL) {
            size_t want = (*buf == NULL) ? cap : cap * 2;
            char *bigger = grow_wiped(*buf, *used, want);
            if (bigger == NULL)
                return fail(p, REDLOCK_ENOMEM, "out of memory");
            *buf = bigger;
            cap = want;
        }
        ssize_t n = read(fd, *buf + *used, cap - *used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return fail_errno(p, "cannot read", errno);
        if (n == 0)
            return REDLOCK_OK;
        *used += (size_t)n;
        if (*used > max_bytes)
            return fail(p, REDLOCK_ECONFIG, "too large: more than %zu bytes (the limit is %zu MiB)",
                        max_bytes, max_bytes >> 20);
    }
}

int rl_secret_file_read(const char *path, size_t max_bytes, char **text, size_t *len,
                        char *problem, size_t problem_len)
{
    rl_msg_buf p;
    rl_msg_init(&p, problem, problem_len);
    *text = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail_errno(&p, "cannot open", errno);
    struct stat st;
    size_t cap = RL_SECRET_FILE_FIRST_CAP;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        if ((uint64_t)st.st_size > max_bytes) {
            close(fd);
            return fail(&p, REDLOCK_ECONFIG, "too large: %" PRIu64 " bytes (the limit is %zu MiB)",
                        (uint64_t)st.st_size, max_bytes >> 20);
        }
        cap = (size_t)st.st_size + 1; /* +1: reading 0 bytes confirms the end */
    }
    char *buf = NULL;
    size_t used = 0;
    int rc = read_all(&p, fd, max_bytes, cap, &buf, &used);
    close(fd);
    if (rc != REDLOCK_OK) {
        rl_secret_file_free(buf, used);
        return rc;
    }
    if (buf != NULL) /* it is: read_all() allocates first */
        buf[used] = '\0'; /* the end was confirmed by a read into room past it */
    *text = buf;
    *len = used;
    return REDLOCK_OK;
}
