/* SPDX-License-Identifier: BSD-3-Clause */
/* Where the benchmarks' masters are: a config's nodes, or a local fleet. */
#include "bench.h"
#include "fleet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bench_masters_from_config(const char *program, const char *path, bench_masters *out)
{
    char err[REDLOCK_ERRBUF_SIZE];
    redlock_config *cfg = NULL;
    if (redlock_config_load_file(&cfg, path, err, sizeof(err)) != REDLOCK_OK) {
        fprintf(stderr, "%s: %s\n", program, err);
        return -1;
    }
    memset(out, 0, sizeof(*out));
    size_t n = redlock_config_node_count(cfg);
    for (size_t i = 0; i < n && i < BENCH_MAX_MASTERS; i++) {
        const char *name = redlock_config_node_name(cfg, i);
        const char *colon = strrchr(name, ':');
        if (strncmp(name, "unix:", 5) == 0 || colon == NULL || name[0] == '[') {
            fprintf(stderr, "%s: %s: only host:port masters are supported\n", program, name);
            redlock_config_free(cfg);
            return -1;
        }
        snprintf(out->host[i], sizeof(out->host[i]), "%.*s", (int)(colon - name), name);
        out->port[i] = (int)strtol(colon + 1, NULL, 10);
        out->n++;
    }
    redlock_config_free(cfg);
    return 0;
}

void bench_masters_from_fleet(const fleet *f, size_t n, bench_masters *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < n; i++) {
        snprintf(out->host[i], sizeof(out->host[i]), "127.0.0.1");
        out->port[i] = fleet_port(f, i);
    }
    out->n = n;
    out->started_here = true;
}
