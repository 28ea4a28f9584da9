/* SPDX-License-Identifier: BSD-3-Clause */
/* Where the tool's configuration comes from: --config, $REDLOCK_CONFIG,
 * --node, or a default file; and where the library's messages go. */
#include "cli.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void log_to_stderr(int level, const char *message, void *arg)
{
    (void)level;
    (void)arg;
    /* Lines quote servers' replies: any byte but CR and LF. */
    char line[2048];
    cli_error("%s", cli_shown(line, sizeof(line), message));
}

/* The first default file that exists, into path; false if none. Also
 * describes where it looked, for the message when nothing is found. */
static bool find_default_config(char *path, size_t len, char *looked, size_t looked_len)
{
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    char user_file[PATH_MAX] = "";
    if (xdg != NULL && xdg[0] != '\0')
        snprintf(user_file, sizeof(user_file), "%s/redlock/redlock.yaml", xdg);
    else if (home != NULL && home[0] != '\0')
        snprintf(user_file, sizeof(user_file), "%s/.config/redlock/redlock.yaml", home);
    const char *system_file = "/etc/redlock/redlock.yaml";
    snprintf(looked, looked_len, "%s%s%s", user_file, user_file[0] ? " and " : "", system_file);
    const char *candidates[] = {user_file, system_file};
    for (size_t i = 0; i < 2; i++) {
        if (candidates[i][0] != '\0' && access(candidates[i], F_OK) == 0) {
            snprintf(path, len, "%s", candidates[i]);
            return true;
        }
    }
    return false;
}

/* Replace the config's masters with the --node list. */
static int apply_nodes(cli *c)
{
    redlock_config_clear_nodes(c->cfg);
    for (size_t i = 0; i < c->node_count; i++) {
        cli_node node;
        if (cli_parse_node(c->nodes[i], &node) != 0) {
            cli_error("--node %s: expected HOST:PORT, [IPV6]:PORT or unix:/path", c->nodes[i]);
            return EX_USAGE;
        }
        int rc = node.is_unix ? redlock_config_add_unix_node(c->cfg, node.host, NULL)
                              : redlock_config_add_tcp_node(c->cfg, node.host, node.port, NULL);
        if (rc != REDLOCK_OK) {
            cli_error("--node %s: %s", c->nodes[i],
                      rc == REDLOCK_EINVAL ? "invalid or repeated node" : redlock_strerror(rc));
            return rc == REDLOCK_EINVAL ? EX_USAGE : EX_SOFTWARE;
        }
    }
    return 0;
}

int cli_load_config(cli *c)
{
    const char *path = c->config_path;
    if (path == NULL) {
        const char *env = getenv("REDLOCK_CONFIG");
        if (env != NULL && env[0] != '\0')
            path = env;
    }
    char found[PATH_MAX];
    if (path == NULL && c->node_count == 0) {
        char looked[2 * PATH_MAX];
        if (!find_default_config(found, sizeof(found), looked, sizeof(looked))) {
            cli_error("no configuration: give --config FILE or --node HOST:PORT, or set "
                      "REDLOCK_CONFIG (looked for %s)",
                      looked);
            return EX_CONFIG;
        }
        path = found;
    }

    int rc;
    if (path != NULL) {
        char err[REDLOCK_ERRBUF_SIZE * 2];
        rc = redlock_config_load_file(&c->cfg, path, err, sizeof(err));
        if (rc != REDLOCK_OK) {
            cli_error("%s", err);
            return rc == REDLOCK_ENOMEM ? EX_SOFTWARE : EX_CONFIG;
        }
    } else {
        rc = redlock_config_new(&c->cfg);
        if (rc != REDLOCK_OK) {
            cli_error("%s", redlock_strerror(rc));
            return EX_SOFTWARE;
        }
    }
    if (c->node_count > 0 && (rc = apply_nodes(c)) != 0) {
        redlock_config_free(c->cfg);
        c->cfg = NULL;
        return rc;
    }

    static const int levels[] = {REDLOCK_LOG_ERROR, REDLOCK_LOG_WARN, REDLOCK_LOG_INFO,
                                 REDLOCK_LOG_DEBUG};
    int v = c->verbosity > 3 ? 3 : c->verbosity;
    redlock_config_set_log(c->cfg, log_to_stderr, NULL, levels[v]);
    return 0;
}
