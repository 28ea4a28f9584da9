/* SPDX-License-Identifier: BSD-3-Clause */
/* A master's send queue, as pure data: the order requests leave it in. */
#include "master/request.h"
#include "util/list.h"
#include "send_queue.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

/* A request of class cls, for lock tag, urgent by urgent_by_us. */
static rl_request *request(rl_request_class cls, uint64_t tag, int64_t urgent_by_us)
{
    rl_request *req = calloc(1, sizeof(*req));
    cr_assert_not_null(req);
    req->queue_class = cls;
    req->lock_tag = tag;
    req->urgent_by_us = urgent_by_us;
    rl_list_init(&req->link);
    return req;
}

static void drop(rl_request *req)
{
    free(req);
}

static rl_send_queue q;

static void setup(void)
{
    rl_send_queue_init(&q);
}

static void teardown(void)
{
    rl_send_queue_free(&q);
}

TestSuite(send_queue, .init = setup, .fini = teardown);

static void push(rl_request *req)
{
    cr_assert(rl_send_queue_push(&q, req));
}

static void expect_next(const rl_request *req)
{
    rl_request *next = rl_send_queue_pop(&q);
    cr_assert_eq(next, req, "popped the wrong request");
}

Test(send_queue, releases_and_the_most_urgent_extensions_take_turns_then_the_rest)
{
    rl_request *acquire1 = request(RL_REQUEST_OTHER, 1, 0);
    rl_request *late_ext = request(RL_REQUEST_EXTENSION, 2, 3000);
    rl_request *ping = request(RL_REQUEST_OTHER, 0, 0);
    rl_request *release1 = request(RL_REQUEST_RELEASE, 3, 0);
    rl_request *soon_ext = request(RL_REQUEST_EXTENSION, 4, 1000);
    rl_request *release2 = request(RL_REQUEST_RELEASE, 5, 0);
    rl_request *tie_ext = request(RL_REQUEST_EXTENSION, 6, 1000);
    rl_request *all[] = {acquire1, late_ext, ping, release1, soon_ext, release2, tie_ext};
    for (size_t i = 0; i < 7; i++)
        push(all[i]);
    cr_assert_eq(q.count, 7);
    expect_next(release1);
    expect_next(soon_ext);
    expect_next(release2);
    expect_next(tie_ext); /* same urgency: first come first */
    expect_next(late_ext);
    expect_next(acquire1);
    expect_next(ping);
    cr_assert_null(rl_send_queue_pop(&q));
    cr_assert_eq(q.count, 0);
    for (size_t i = 0; i < 7; i++)
        drop(all[i]);
}

Test(send_queue, a_release_waits_behind_a_queued_acquire_of_its_lock)
{
    rl_request *acquire = request(RL_REQUEST_OTHER, 7, 0);
    rl_request *other = request(RL_REQUEST_OTHER, 8, 0);
    rl_request *extension = request(RL_REQUEST_EXTENSION, 7, 500);
    rl_request *release = request(RL_REQUEST_RELEASE, 7, 0);
    rl_request *stranger = request(RL_REQUEST_RELEASE, 9, 0);
    push(acquire);
    push(other);
    push(extension);
    push(release);
    push(stranger);
    /* Another lock's release goes first; this one stays behind its SET,
     * and may pass its extension (which only extends a key that is
     * still ours). */
    expect_next(stranger);
    expect_next(extension);
    expect_next(acquire);
    expect_next(other);
    expect_next(release);
    drop(acquire);
    drop(other);
    drop(extension);
    drop(release);
    drop(stranger);
}

Test(send_queue, anything_can_be_taken_out_and_the_order_holds)
{
    enum { N = 1000 };
    static rl_request *ext[N];
    /* Urgencies in a scrambled order. */
    for (size_t i = 0; i < N; i++) {
        ext[i] = request(RL_REQUEST_EXTENSION, i + 1, (int64_t)((i * 7919) % N));
        push(ext[i]);
    }
    rl_request *fifo[3] = {request(RL_REQUEST_RELEASE, 5000, 0), request(RL_REQUEST_OTHER, 0, 0),
                        request(RL_REQUEST_OTHER, 5001, 0)};
    for (size_t i = 0; i < 3; i++)
        push(fifo[i]);
    /* Every third extension, and the inspect, withdrawn. */
    for (size_t i = 0; i < N; i += 3)
        rl_send_queue_remove(&q, ext[i]);
    rl_send_queue_remove(&q, fifo[1]);
    cr_assert_eq(q.count, N - (N + 2) / 3 + 2);
    expect_next(fifo[0]);
    int64_t last = -1;
    size_t popped = 0;
    rl_request *s;
    while ((s = rl_send_queue_pop(&q)) != NULL && s->queue_class == RL_REQUEST_EXTENSION) {
        cr_assert_geq(s->urgent_by_us, last, "out of order");
        cr_assert_neq((s->lock_tag - 1) % 3, 0, "a withdrawn one came out");
        last = s->urgent_by_us;
        popped++;
    }
    cr_assert_eq(popped, N - (N + 2) / 3);
    cr_assert_eq(s, fifo[2]);
    cr_assert_eq(q.count, 0);
    /* Its memory shrank back as it emptied. */
    cr_assert_leq(q.extend_cap, 64);
    for (size_t i = 0; i < N; i++)
        drop(ext[i]);
    for (size_t i = 0; i < 3; i++)
        drop(fifo[i]);
}

Test(send_queue, a_batch_takes_its_class_turn_and_continues_in_its_class)
{
    rl_request *r1 = request(RL_REQUEST_RELEASE, 1, 0);
    rl_request *r2 = request(RL_REQUEST_RELEASE, 2, 0);
    rl_request *e1 = request(RL_REQUEST_EXTENSION, 3, 100);
    rl_request *e2 = request(RL_REQUEST_EXTENSION, 4, 200);
    rl_request *all[] = {r1, r2, e1, e2};
    for (size_t i = 0; i < 4; i++)
        push(all[i]);
    /* A release leads: the next of its class is the other release, even
     * though extensions wait too. */
    rl_request *first = rl_send_queue_peek(&q, true);
    cr_assert_eq(first, r1);
    rl_send_queue_remove(&q, first);
    cr_assert_eq(rl_send_queue_peek_after(&q, first), r2);
    rl_send_queue_remove(&q, r2);
    rl_send_queue_sent(&q, first);
    /* Then the extensions' turn, whole. */
    first = rl_send_queue_peek(&q, true);
    cr_assert_eq(first, e1);
    rl_send_queue_remove(&q, first);
    cr_assert_eq(rl_send_queue_peek_after(&q, first), e2);
    rl_send_queue_remove(&q, e2);
    rl_send_queue_sent(&q, first);
    cr_assert_null(rl_send_queue_peek(&q, true));
    /* Extensions held back to gather: releases go whatever the turn. */
    push(e1);
    push(r1);
    cr_assert_eq(rl_send_queue_peek(&q, false), r1);
    rl_send_queue_remove(&q, r1);
    rl_send_queue_remove(&q, e1);
    for (size_t i = 0; i < 4; i++)
        drop(all[i]);
}
