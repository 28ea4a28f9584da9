/* SPDX-License-Identifier: BSD-3-Clause */
/* Test certificates made with the openssl tool. See fleet_tls.h. */
#include "fleet_tls.h"
#include "testclock.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define OPENSSL_TIMEOUT_MS 20000 /* one key or certificate takes milliseconds */
#define CERT_DAYS "2"

/* Runs openssl with args (NULL-terminated) in dir, output appended to
 * dir/openssl.log. 0 when it exits 0 in time. */
static int run_openssl(const char *dir, const char *const *args)
{
    const char *argv[24] = {"openssl"};
    size_t n = 1;
    for (; args[n - 1] != NULL && n < 23; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (chdir(dir) != 0)
            _exit(126);
        int fd = open("openssl.log", O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, STDIN_FILENO);
        execvp("openssl", (char *const *)argv);
        _exit(127);
    }
    double deadline = tc_now_ms() + OPENSSL_TIMEOUT_MS;
    for (;;) {
        int status = 0;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
        if (r < 0 && errno != EINTR)
            return -1;
        if (tc_now_ms() >= deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        tc_sleep_ms(5);
    }
}

static int write_file(const char *dir, const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* The file names of NAME (NAME.key, NAME.csr, NAME.crt) and the subject of
 * common name cn. */
typedef struct cert_names {
    char key[64];
    char csr[64];
    char crt[64];
    char subj[128];
} cert_names;

static cert_names names_of(const char *name, const char *cn)
{
    cert_names n;
    snprintf(n.key, sizeof(n.key), "%s.key", name);
    snprintf(n.csr, sizeof(n.csr), "%s.csr", name);
    snprintf(n.crt, sizeof(n.crt), "%s.crt", name);
    snprintf(n.subj, sizeof(n.subj), "/CN=%s", cn);
    return n;
}

/* A self-signed CA: NAME.crt and NAME.key. */
static int make_ca(const char *dir, const char *name, const char *cn)
{
    cert_names n = names_of(name, cn);
    const char *args[] = {"req", "-x509", "-newkey", "ec", "-pkeyopt",
                          "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", n.key, "-out",
                          n.crt, "-days", CERT_DAYS, "-subj", n.subj, NULL};
    return run_openssl(dir, args);
}

/* NAME.crt and NAME.key, signed by ca, with the extensions of ext (a file
 * in dir), valid for days days from now ("-1": expired at once, its end
 * before its start). */
static int make_signed(const char *dir, const char *name, const char *cn, const char *ext,
                       const char *days)
{
    cert_names n = names_of(name, cn);
    const char *req[] = {"req", "-new", "-newkey", "ec", "-pkeyopt",
                         "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", n.key, "-out",
                         n.csr, "-subj", n.subj, NULL};
    const char *sign[] = {"x509", "-req", "-in", n.csr, "-CA", "ca.crt", "-CAkey", "ca.key",
                          "-CAcreateserial", "-out", n.crt, "-days", days, "-extfile", ext,
                          NULL};
    return run_openssl(dir, req) == 0 && run_openssl(dir, sign) == 0 ? 0 : -1;
}

int fleet_tls_make_certs(const char *dir)
{
    if (write_file(dir, "server.ext",
                   "subjectAltName = DNS:localhost, IP:127.0.0.1\n"
                   "extendedKeyUsage = serverAuth, clientAuth\n") != 0 ||
        write_file(dir, "client.ext", "extendedKeyUsage = clientAuth\n") != 0 ||
        make_ca(dir, "ca", "redlock test CA") != 0 ||
        make_ca(dir, "other-ca", "redlock other CA") != 0 ||
        make_signed(dir, "server", "localhost", "server.ext", CERT_DAYS) != 0 ||
        make_signed(dir, "expired", "localhost", "server.ext", "-1") != 0 ||
        make_signed(dir, "client", "redlock test client", "client.ext", CERT_DAYS) != 0) {
        fprintf(stderr, "fleet: openssl could not make the test certificates (see %s/openssl.log)\n",
                dir);
        return -1;
    }
    return 0;
}
