/* SPDX-License-Identifier: BSD-3-Clause */
/* Checks and helpers of the thread tests; see threads.h. */
#include "threads.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_int failures;
static pthread_mutex_t report_mu = PTHREAD_MUTEX_INITIALIZER;

__attribute__((format(printf, 4, 0))) static void report(const char *file, int line,
                                                          const char *cond, const char *fmt,
                                                          va_list ap)
{
    /* One report at a time, so lines of different threads do not mix. */
    pthread_mutex_lock(&report_mu);
    fprintf(stderr, "FAIL %s:%d: %s: ", file, line, cond);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    fflush(stderr);
    pthread_mutex_unlock(&report_mu);
}

void check_failed(const char *file, int line, const char *cond, const char *fmt, ...)
{
    atomic_fetch_add(&failures, 1);
    va_list ap;
    va_start(ap, fmt);
    report(file, line, cond, fmt, ap);
    va_end(ap);
}

void require_failed(const char *file, int line, const char *cond, const char *fmt, ...)
{
    atomic_fetch_add(&failures, 1);
    va_list ap;
    va_start(ap, fmt);
    report(file, line, cond, fmt, ap);
    va_end(ap);
    exit(1); /* the fleet's exit handler stops the servers */
}

int check_failures(void)
{
    return atomic_load(&failures);
}

void run_threads(pthread_t *threads, size_t n, void *(*fn)(void *))
{
    for (size_t i = 0; i < n; i++) {
        int err = pthread_create(&threads[i], NULL, fn, (void *)(uintptr_t)i);
        REQUIRE(err == 0, "pthread_create: error %d", err);
    }
}

void join_threads(pthread_t *threads, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pthread_join(threads[i], NULL);
}
