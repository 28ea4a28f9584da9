/* SPDX-License-Identifier: BSD-3-Clause */
/* run --metrics-file: the client's statistics as a node_exporter textfile. */
#ifndef REDLOCK_CLI_METRICS_FILE_H
#define REDLOCK_CLI_METRICS_FILE_H

#include <redlock/redlock.h>

/* How often run writes it while CMD runs; and once more at the end. */
#define CLI_METRICS_INTERVAL_S 5.0

/* Write client's statistics (masters named by cfg) to path in the
 * Prometheus text format, through a temporary file in path's directory
 * renamed over it. Returns 0 or an errno value. */
int cli_metrics_file_write(const char *path, const redlock_client *client,
                           const redlock_config *cfg);

#endif
