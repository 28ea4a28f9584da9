/* SPDX-License-Identifier: BSD-3-Clause */
/* The failover suite's event log; see failover_log.h. */
#include "failover_log.h"

#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

int flog_open(const char *path)
{
    return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

void flog_write(int fd, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    /* clang-analyzer 14 misreads the va_start above as missing. */
    int n = vsnprintf(line, sizeof(line) - 1, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    /* One write: O_APPEND makes it land whole at the end. */
    ssize_t w = write(fd, line, (size_t)n);
    (void)w;
}

int flog_parse(const char *line, flog_event *ev)
{
    memset(ev, 0, sizeof(*ev));
    long long t = 0;
    long long a = 0;
    long long b = 0;
    long pid = 0;
    ev->type = line[0];
    int ok;
    switch (line[0]) {
    case 'S': /* the token is optional: logs from before fencing have none */
        ok = sscanf(line, "S %lld %ld %lld %79s %lld", &t, &pid, &a, ev->text, &b) >= 4;
        break;
    case 'E':
        ok = sscanf(line, "E %lld %ld %79s", &t, &pid, ev->text) == 3;
        break;
    case 'A':
        ok = sscanf(line, "A %lld %ld %lld %lld", &t, &pid, &a, &b) == 4;
        break;
    case 'N':
        ok = sscanf(line, "N %lld %ld %79s", &t, &pid, ev->text) == 3;
        break;
    case 'K':
        ok = sscanf(line, "K %lld %ld", &t, &pid) == 2;
        break;
    case 'X':
        ok = sscanf(line, "X %lld %ld", &t, &pid) == 2;
        break;
    case 'C':
        ok = sscanf(line, "C %lld", &t) == 1;
        break;
    case 'F':
        ok = sscanf(line, "F %lld %79s %ld", &t, ev->text, &pid) == 3;
        break;
    case 'U':
        ok = sscanf(line, "U %lld %lld", &t, &a) == 2;
        break;
    case 'Z':
        ok = sscanf(line, "Z %lld", &t) == 1;
        break;
    default:
        ok = 0;
    }
    ev->t = t;
    ev->pid = pid;
    ev->a = a;
    ev->b = b;
    return ok ? 0 : -1;
}
