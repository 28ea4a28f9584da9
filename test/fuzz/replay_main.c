/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fuzz target without libFuzzer: runs every file of the directories (or
 * the files) given as arguments through LLVMFuzzerTestOneInput, in name
 * order, names starting with '.' left out. The test suite replays each
 * target's seed corpus and regression inputs this way, with any compiler.
 * A broken check aborts, naming the input last printed.
 */
#define _POSIX_C_SOURCE 200809L

#include "fuzz.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

/* The whole file in a buffer of exactly its size, so that a sanitizer
 * catches a read past the input's end. */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (f == NULL || fstat(fileno(f), &st) != 0) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        if (f != NULL)
            fclose(f);
        return -1;
    }
    size_t len = (size_t)st.st_size;
    uint8_t *input = malloc(len ? len : 1);
    bool read_all = input != NULL && fread(input, 1, len, f) == len;
    fclose(f);
    if (!read_all) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(input);
        return -1;
    }
    printf("replay %s (%zu bytes)\n", path, len);
    fflush(stdout);
    LLVMFuzzerTestOneInput(input, len);
    free(input);
    return 0;
}

static int visible(const struct dirent *entry)
{
    return entry->d_name[0] != '.';
}

/* Every regular file of dir; the count in *count. */
static int replay_dir(const char *dir, size_t *count)
{
    struct dirent **names = NULL;
    int n = scandir(dir, &names, visible, alphasort);
    if (n < 0) {
        fprintf(stderr, "%s: %s\n", dir, strerror(errno));
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
        if (rc == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            rc = replay_file(path);
            (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    size_t count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
            return 1;
        }
        int rc;
        if (S_ISDIR(st.st_mode)) {
            rc = replay_dir(argv[i], &count);
        } else {
            rc = replay_file(argv[i]);
            count++;
        }
        if (rc != 0)
            return 1;
    }
    printf("%zu inputs replayed\n", count);
    if (count == 0) {
        fprintf(stderr, "usage: %s DIR|FILE...: nothing to replay\n", argv[0]);
        return 1;
    }
    return 0;
}
