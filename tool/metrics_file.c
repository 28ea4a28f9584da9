/* SPDX-License-Identifier: BSD-3-Clause */
/* run --metrics-file: the client's statistics in the Prometheus text format
 * for node_exporter's textfile collector, written to a temporary file in
 * the same directory and renamed over PATH, so that a scrape reads the
 * whole of one version or of the next, never half of one. */
#include "metrics_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The exposition, malloc'd, or NULL with errno set. */
static char *render(const redlock_client *client, const redlock_config *cfg, size_t *len)
{
    static redlock_stats s; /* some 30 KiB; the loop's thread only */
    s.size = sizeof(s);
    size_t size = (size_t)32 * 1024;
    size_t needed = 0;
    if (redlock_client_stats(client, &s) != REDLOCK_OK) {
        errno = EINVAL;
        return NULL;
    }
    for (int attempt = 0; attempt < 2; attempt++) {
        char *text = malloc(size);
        if (text == NULL)
            return NULL;
        int rc = redlock_stats_format_prometheus(&s, cfg, NULL, text, size, &needed);
        if (rc == REDLOCK_OK) {
            *len = needed - 1;
            return text;
        }
        free(text);
        if (rc != REDLOCK_ENOSPC)
            break;
        size = needed; /* the masters' names made it longer than guessed */
    }
    errno = ENOMEM;
    return NULL;
}

/* The whole of text to fd; false with errno set. */
static bool write_all(int fd, const char *text, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, text, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        text += n;
        len -= (size_t)n;
    }
    return true;
}

int cli_metrics_file_write(const char *path, const redlock_client *client,
                           const redlock_config *cfg)
{
    size_t len = 0;
    char *text = render(client, cfg, &len);
    if (text == NULL)
        return errno;
    /* DIR/.BASE.XXXXXX: beside PATH (a rename within one file system), and
     * not named *.prom, which the collector would read. */
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash != NULL ? (size_t)(slash - path) + 1 : 0;
    size_t tmp_size = strlen(path) + sizeof("/..XXXXXX");
    char *tmp = malloc(tmp_size);
    if (tmp == NULL) {
        free(text);
        return ENOMEM;
    }
    memcpy(tmp, path, dir_len);
    snprintf(tmp + dir_len, tmp_size - dir_len, ".%s.XXXXXX", path + dir_len);
    int err = 0;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        err = errno;
    } else {
        /* Readable by the collector, which may run as another user. */
        if (fchmod(fd, 0644) != 0 || !write_all(fd, text, len))
            err = errno;
        if (close(fd) != 0 && err == 0)
            err = errno;
        if (err == 0 && rename(tmp, path) != 0)
            err = errno;
        if (err != 0)
            unlink(tmp);
    }
    free(tmp);
    free(text);
    return err;
}
