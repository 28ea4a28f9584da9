/* SPDX-License-Identifier: BSD-3-Clause */
/* A release queued behind a master's handshake stays queued when its
 * deadline passes: the master may still send what was queued before it,
 * which the release may be there to undo. (Freeing the client, which
 * cancels the release, is tested against real masters in
 * test/integration/test_cleanup.c.) The master is played by hand, no
 * server: it is kept CONNECTING, and its queue is read directly. */
#include "context/context.h"
#include "config/config_internal.h"
#include "lock/lock.h"
#include "master/master.h"
#include "round/quorum.h"
#include "util/list.h"
#include "wire/resources.h"

#include <criterion/criterion.h>
#include <string.h>

static struct ev_loop *loop;
static redlock_client *client;

static void log_nothing(int level, const char *message, void *arg)
{
}

/* A client of one master that stays CONNECTING until the test says. */
static void open_client(void)
{
    loop = ev_loop_new(EVFLAG_AUTO);
    cr_assert_not_null(loop);
    redlock_config *cfg = NULL;
    cr_assert_eq(redlock_config_new(&cfg), REDLOCK_OK);
    /* Under /dev/null: connecting fails at once, whatever the machine. */
    cr_assert_eq(redlock_config_add_unix_node(cfg, "/dev/null/redlock-unit.sock", NULL),
                 REDLOCK_OK);
    redlock_config_set_log(cfg, log_nothing, NULL, REDLOCK_LOG_DEBUG);
    cr_assert_eq(redlock_client_new(&client, cfg, loop), REDLOCK_OK);
    redlock_config_free(cfg);
    rl_master *m = &client->masters[0];
    cr_assert_eq(m->state, RL_MASTER_IDLE);
    ev_timer_stop(loop, &m->reconnect_timer);
    m->state = RL_MASTER_CONNECTING;
    m->connect_deadline_us = rl_now_us() + 60000000;
}

/* The handshake failed: what is queued fails, then the client goes. */
static void close_client(void)
{
    rl_master *m = &client->masters[0];
    rl_link *link;
    while ((link = rl_list_pop_front(&m->waiting)) != NULL) {
        rl_request *req = rl_container_of(link, rl_request, link);
        req->ops->on_failure(req, REDLOCK_MASTER_NOT_CONNECTED, "handshake failed");
    }
    m->state = RL_MASTER_IDLE;
    redlock_client_free(client);
    while (ev_run(loop, EVRUN_NOWAIT))
        ;
    ev_loop_destroy(loop);
}

/* The n-th slot queued on the master, or NULL. */
static rl_slot *queued(size_t n)
{
    rl_master *m = &client->masters[0];
    rl_link *link = m->waiting.next;
    for (size_t i = 0; i < n && link != &m->waiting; i++)
        link = link->next;
    return link == &m->waiting ? NULL : rl_slot_of(rl_container_of(link, rl_request, link));
}

static void record(int status, const redlock_result *r, void *arg)
{
    *(int *)arg = status;
}

Test(queued_release, outlives_its_deadline_behind_a_set)
{
    open_client();
    /* An acquire, decided, leaves its SET queued (on success it would). */
    rl_command set;
    rl_keys r = rl_keys_one("r", 1);
    rl_command_acquire(&set, &r, "v", 1, 10000, NULL, 0);
    rl_round *acquire = rl_round_start(client, RL_ROUND_ACQUIRE, &set, NULL, NULL, NULL);
    cr_assert_not_null(acquire);
    rl_round_detach(acquire, false);

    redlock_lock *lock = NULL;
    cr_assert_eq(redlock_lock_new(&lock, "r", 1, "v", 1, 0), REDLOCK_OK);
    int status = -1;
    cr_assert_eq(redlock_release_async(client, lock, record, &status), REDLOCK_OK);
    rl_slot *release = queued(1);
    cr_assert_not_null(release);
    cr_assert_eq(release->round->kind, RL_ROUND_RELEASE);

    /* Its deadline passes while the master is still connecting. */
    release->deadline_us = 0;
    ev_invoke(loop, &release->round->timer, EV_TIMER);
    cr_assert_eq(status, REDLOCK_ENOQUORUM);
    cr_assert_eq(queued(0)->round, acquire, "the SET still waits");
    cr_assert_eq(queued(1), release, "the release must still wait behind it");
    cr_assert_eq(release->state, RL_SLOT_WAITING);
    redlock_lock_free(lock);
    close_client();
}
