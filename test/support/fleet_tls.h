/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test certificates for TLS fleets (fleet_options.tls), made with the
 * openssl tool in a directory of the fleet's. Every key is an unencrypted
 * P-256 key; every certificate but expired.crt is valid for two days:
 *
 *   ca.crt, ca.key              the CA the servers and the client trust
 *   server.crt, server.key      signed by ca: CN localhost, SAN DNS:localhost
 *                               and IP:127.0.0.1
 *   expired.crt, expired.key    as server.crt, but expired: its validity
 *                               ends a day before it begins
 *   client.crt, client.key      signed by ca: a client certificate
 *   other-ca.crt, other-ca.key  an unrelated CA (a client trusting only it
 *                               rejects the servers)
 */
#ifndef REDLOCK_TEST_FLEET_TLS_H
#define REDLOCK_TEST_FLEET_TLS_H

/* Makes the files above in dir (which must exist); openssl's output goes
 * to dir/openssl.log. 0, or -1 with a message on stderr. Each run of
 * openssl is bounded in time. */
int fleet_tls_make_certs(const char *dir);

#endif
