/* SPDX-License-Identifier: BSD-3-Clause */
/* The tool over TLS (ctest label tls): a config with the tls keys, and
 * --node rediss://... taking the config's tls_* files; a failed handshake
 * is the master's outcome in ping's output. Skipped on a build without
 * TLS (cli_urls checks that it refuses rediss:// there). */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <string.h>

#define T 20000
#define MASTERS 3

static void setup(void)
{
    if (!redlock_tls_available(NULL))
        cr_skip_test("this build has no TLS");
    const fleet_options opts = {.tls = FLEET_TLS_CLIENT_CERT};
    cli_setup(MASTERS, &opts);
}

TestSuite(cli_tls, .init = setup, .fini = cli_teardown, .timeout = 120);

/* The TLS keys for the fleet's certificates: ca (a file of the fleet's
 * certificate directory) as the CA, with the client certificate. */
static const char *tls_keys(bool on, const char *ca)
{
    const char *dir = fleet_tls_dir(cli.fleet);
    return cli_format("tls: %s\ntls_ca_file: %s/%s\ntls_cert_file: %s/client.crt\n"
                      "tls_key_file: %s/client.key",
                      on ? "true" : "false", dir, ca, dir, dir);
}

Test(cli_tls, a_config_with_tls)
{
    const cli_config_options o = {.extra = tls_keys(true, "ca.crt")};
    const char *config = cli_write_config("tls.yaml", &o);
    cli_expect_exit(cli_run(CLI_ARGS("-c", config, "ping"), NULL, T), 0);
    const cli_result *r =
        cli_run(CLI_ARGS("-c", config, "run", "tls-res", "--", "true"), NULL, T);
    cli_expect_exit(r, 0);
    const cli_result *s = cli_run(CLI_ARGS("-c", config, "status", "tls-res"), NULL, T);
    cli_expect_exit(s, 0);
}

Test(cli_tls, rediss_nodes_take_the_config_files)
{
    const cli_config_options o = {.extra = tls_keys(false, "ca.crt")};
    const char *config = cli_write_config("files.yaml", &o);
    const char *args[2 * MASTERS + 4] = {"-c", config};
    size_t n = 2;
    for (size_t i = 0; i < MASTERS; i++) {
        args[n++] = "-n";
        args[n++] = cli_format("rediss://127.0.0.1:%d", fleet_port(cli.fleet, i));
    }
    args[n++] = "ping";
    args[n] = NULL;
    const cli_result *r = cli_run(args, NULL, T);
    cli_expect_exit(r, 0);
    /* The same masters as redis://: plain to a TLS port fails. */
    for (size_t i = 3; i < n - 1; i += 2)
        args[i] = cli_format("redis://127.0.0.1:%d", fleet_port(cli.fleet, (i - 3) / 2));
    r = cli_run(args, NULL, T);
    cr_assert_neq(r->exit_code, 0, "%s", r->out);
    cr_assert_not_null(strstr(r->out, "connection lost"), "out: %s\nerr: %s", r->out, r->err);
}

Test(cli_tls, a_handshake_refused_is_shown_per_master)
{
    const cli_config_options o = {.extra = tls_keys(true, "other-ca.crt")};
    const char *config = cli_write_config("other.yaml", &o);
    const cli_result *r = cli_run(CLI_ARGS("-c", config, "ping"), NULL, T);
    cr_assert_neq(r->exit_code, 0);
    cr_assert_not_null(strstr(r->out, "certificate verify failed"), "out: %s\nerr: %s", r->out,
                       r->err);
    cr_assert_null(strstr(r->out, "PRIVATE KEY"));
    cr_assert_null(strstr(r->err, "PRIVATE KEY"));
}
