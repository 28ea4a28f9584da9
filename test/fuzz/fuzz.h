/* SPDX-License-Identifier: BSD-3-Clause */
/* What the fuzz targets share: the entry point libFuzzer calls (and the
 * replay program, replay_main.c), and the check that turns a broken promise
 * into a crash libFuzzer reports with its input. */
#ifndef REDLOCK_FUZZ_H
#define REDLOCK_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* One input; always returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property every input must keep, beyond what the sanitizers check. */
#define FUZZ_CHECK(cond)                                                             \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                 \
        }                                                                            \
    } while (0)

#endif
