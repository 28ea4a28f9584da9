/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A scripted fake master, for the faults a real redis-server cannot produce
 * on demand: a dataset still loading, a connection closed in the middle of
 * a reply, a server that is not Redis at all, one that never answers.
 *
 * - It listens on 127.0.0.1, on a port the kernel picks, and serves every
 *   connection from one thread of its own (poll(2), no blocking call).
 * - Requests are read as RESP (hiredis's reader). The library's connection
 *   handshake (AUTH, SELECT, SCRIPT LOAD of the library's scripts, INFO) is
 *   answered as Redis would, where the mode says so: any password is
 *   accepted, SCRIPT LOAD returns the script's SHA1, and INFO gives a run_id
 *   of the fake's own, so it never passes for another server.
 * - It can be paused and resumed, as a stopped process: connections still
 *   complete in the kernel and requests wait in its buffers, unanswered.
 * - Replies are small and written without blocking; a client that stops
 *   reading may miss some.
 * - Bounded: fake_master_stop() ends it; one left running stops serving by
 *   itself after FAKE_MASTER_LIFETIME_MS. Its thread blocks every signal.
 */
#ifndef REDLOCK_TEST_FAKE_MASTER_H
#define REDLOCK_TEST_FAKE_MASTER_H

#ifdef __cplusplus
extern "C" {
#endif

#define FAKE_MASTER_LIFETIME_MS 300000 /* longer than any test's timeout */

typedef enum fake_master_mode {
    /* Every command, the handshake's included, gets the error reply. */
    FAKE_MASTER_ERROR = 0,
    /* The handshake is answered; every other command gets the error reply. */
    FAKE_MASTER_ERROR_AFTER_HANDSHAKE,
    /* The handshake is answered; the first other command gets the first
     * half of a bulk reply ("$10\r\nhalf"), then the connection is closed. */
    FAKE_MASTER_HALF_REPLY,
    /* Not Redis: bytes that are not RESP, from FAKE_MASTER_GARBAGE_BYTE on,
     * sent as soon as a connection is accepted and again after every read. */
    FAKE_MASTER_GARBAGE,
    /* Accepts connections and reads them, never writes a byte. */
    FAKE_MASTER_SILENT,
    /* The handshake is answered; every other command gets the header of an
     * array of FAKE_MASTER_HUGE_ELEMENTS elements, and nothing more. */
    FAKE_MASTER_HUGE_ARRAY,
    /* The handshake is answered; every other command is read and never
     * answered. */
    FAKE_MASTER_SILENT_AFTER_HANDSHAKE
} fake_master_mode;

/* What a FAKE_MASTER_HUGE_ARRAY announces: 16 GB of pointers. */
#define FAKE_MASTER_HUGE_ELEMENTS "2000000000"

/* The first byte a FAKE_MASTER_GARBAGE fake sends: no RESP type byte. */
#define FAKE_MASTER_GARBAGE_BYTE 0xff

typedef struct fake_master fake_master;

/* Start a fake. error_reply (without the leading '-' and the CRLF, e.g.
 * "LOADING Redis is loading the dataset in memory") is for the ERROR modes;
 * NULL otherwise. NULL on failure, with a message on stderr. */
fake_master *fake_master_start(fake_master_mode mode, const char *error_reply);
/* Its port on 127.0.0.1. */
int fake_master_port(const fake_master *fm);
/* Connections accepted so far. */
unsigned fake_master_connections(const fake_master *fm);
/* Commands read so far, the handshake's included. */
unsigned fake_master_commands(const fake_master *fm);
/* Of those, the ones that are not part of the handshake (modes that read
 * requests as RESP). */
unsigned fake_master_requests(const fake_master *fm);
/* Stop serving until fake_master_resume(): nothing is accepted, read or
 * answered once this returns. */
void fake_master_pause(fake_master *fm);
/* Serve again: what waited is read and answered now. */
void fake_master_resume(fake_master *fm);
/* Close every connection and the listener, join the thread, free. NULL is
 * allowed. */
void fake_master_stop(fake_master *fm);

#ifdef __cplusplus
}
#endif

#endif
