/* SPDX-License-Identifier: BSD-3-Clause */
/* Bounds on what a master's replies may make hiredis allocate. See
 * reader_bounds.h. */
#include "wire/reader_bounds.h"

#include <hiredis/hiredis.h>
#include <pthread.h>

#if HIREDIS_MAJOR >= 1

int rl_reader_bound(redisReader *reader)
{
    reader->maxelements = RL_READER_MAX_ELEMENTS;
    return 0;
}

#else

/* hiredis 0.14 has no maxelements: its reader is given a copy of its own
 * reply functions in which creating a larger array fails, which the reader
 * reports as an error ("Out of memory") and the connection closes. */
static redisReplyObjectFunctions bounded;
static void *(*default_create_array)(const redisReadTask *, int);
static pthread_once_t bounded_once = PTHREAD_ONCE_INIT;

static void *create_bounded_array(const redisReadTask *task, int elements)
{
    if (elements > RL_READER_MAX_ELEMENTS)
        return NULL;
    return default_create_array(task, elements);
}

static void make_bounded(void)
{
    redisReader *probe = redisReaderCreate();
    if (probe == NULL || probe->fn == NULL || probe->fn->createArray == NULL) {
        if (probe != NULL)
            redisReaderFree(probe);
        return;
    }
    bounded = *probe->fn;
    default_create_array = probe->fn->createArray;
    bounded.createArray = create_bounded_array;
    redisReaderFree(probe);
}

int rl_reader_bound(redisReader *reader)
{
    pthread_once(&bounded_once, make_bounded);
    if (default_create_array == NULL)
        return -1;
    if (reader->fn != NULL && reader->fn->createArray == default_create_array)
        reader->fn = &bounded;
    return 0;
}

#endif
