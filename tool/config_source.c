/* SPDX-License-Identifier: BSD-3-Clause */
/* Where the tool's configuration comes from: --config, $REDLOCK_CONFIG,
 * --node (with $REDLOCK_PASSWORD), or a default file; and where the
 * library's messages go. */
#include "cli.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* "redlock: 2026-11-26T12:40:01.123Z info: message": the wall clock (UTC,
 * to the millisecond), to line the tool's lines up with the masters' logs
 * and other hosts'. */
static void log_to_stderr(int level, const char *message, void *arg)
{
    (void)arg;
    static const char *const names[] = {"error", "warn", "info", "debug"};
    struct timespec now;
    struct tm utc;
    char when[32] = "";
    if (clock_gettime(CLOCK_REALTIME, &now) == 0 && gmtime_r(&now.tv_sec, &utc) != NULL) {
        size_t n = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &utc);
        snprintf(when + n, sizeof(when) - n, ".%03ldZ", now.tv_nsec / 1000000);
    }
    /* Lines quote servers' replies: any byte but CR and LF. */
    char line[2048];
    cli_error("%s %s: %s", when, level >= 0 && level <= 3 ? names[level] : "log",
              cli_shown(line, sizeof(line), message));
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

/* Adds one --node master to c->cfg, with password (may be NULL) unless its
 * URL gives one. Returns 0, or the exit status after saying why, showing
 * the value without its password. */
static int add_node(cli *c, const char *text, const char *password)
{
    char redacted[1024];
    char shown[CLI_SHOWN_SIZE * 2];
    cli_shown(shown, sizeof(shown), redlock_url_redact(text, redacted, sizeof(redacted)));
    cli_node node;
    if (cli_parse_node(text, &node) != 0) {
        cli_error("--node %s: expected HOST[:PORT], [IPV6][:PORT], unix:/PATH, "
                  "redis://[USER[:PASSWORD]@]HOST[:PORT][/DB], rediss://... or "
                  "unix:///PATH[?db=N]",
                  shown);
        return EX_USAGE;
    }
    char why[REDLOCK_ERRBUF_SIZE] = "";
    int rc;
    if (node.is_url) {
        rc = redlock_config_add_node_url_auth(c->cfg, text, NULL, password, NULL, why,
                                              sizeof(why));
    } else {
        size_t index = 0;
        rc = node.is_unix ? redlock_config_add_unix_node(c->cfg, node.host, &index)
                          : redlock_config_add_tcp_node(c->cfg, node.host, node.port, &index);
        if (rc == REDLOCK_EINVAL)
            snprintf(why, sizeof(why), "invalid or repeated node");
        else if (rc == REDLOCK_OK && password != NULL &&
                 (rc = redlock_config_node_set_auth(c->cfg, index, NULL, password)) ==
                     REDLOCK_EINVAL)
            snprintf(why, sizeof(why), "REDLOCK_PASSWORD is too long (at most 4096 bytes)");
    }
    if (rc == REDLOCK_OK)
        return 0;
    cli_error("--node %s: %s", shown, why[0] != '\0' ? why : redlock_strerror(rc));
    /* ECONFIG: a rediss:// master, and this build has no TLS. */
    return rc == REDLOCK_ENOMEM ? EX_SOFTWARE : rc == REDLOCK_ECONFIG ? EX_CONFIG : EX_USAGE;
}

/* Replace the config's masters with the --node list. $REDLOCK_PASSWORD
 * (empty: unset) is the password of those whose URL gives none. */
static int apply_nodes(cli *c)
{
    const char *password = getenv("REDLOCK_PASSWORD");
    if (password != NULL && password[0] == '\0')
        password = NULL;
    redlock_config_clear_nodes(c->cfg);
    int rc = 0;
    for (size_t i = 0; i < c->node_count && rc == 0; i++)
        rc = add_node(c, c->nodes[i], password);
    /* Read now: no password stays in argv, which ps shows to every user. */
    for (size_t i = 0; i < c->node_count; i++)
        redlock_url_mask_password(c->nodes[i]);
    return rc;
}

int cli_load_config(cli *c)
{
    if (c->cfg != NULL)
        return 0;
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
        const char *exposed = redlock_config_password_exposed(c->cfg);
        if (exposed != NULL && !c->quiet) {
            char shown[PATH_MAX];
            cli_shown(shown, sizeof(shown), exposed);
            cli_error("warning: %s holds a password and is readable by others (chmod o-r %s)",
                      shown, shown);
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
