/* SPDX-License-Identifier: BSD-3-Clause */
/* One master's requests waiting for room in its window. See send_queue.h. */
#include "master/send_queue.h"
#include "util/list.h"

#include <stdlib.h>

#define RL_SEND_QUEUE_MIN_CAP 64

void rl_send_queue_init(rl_send_queue *q)
{
    rl_list_init(&q->releases);
    rl_list_init(&q->others);
    q->extends = NULL;
    q->extend_count = q->extend_cap = 0;
    q->count = 0;
    q->next_seq = 0;
    q->extension_turn = false;
}

void rl_send_queue_free(rl_send_queue *q)
{
    free(q->extends);
    q->extends = NULL;
    q->extend_cap = 0;
}

/* Extensions go by urgency; the FIFO classes by their link. */
static bool is_extension(const rl_request *req)
{
    return req->queue_class == RL_REQUEST_EXTENSION;
}

/* a must go before b. */
static bool heap_before(const rl_queued_extension *a, const rl_queued_extension *b)
{
    if (a->urgent_by_us != b->urgent_by_us)
        return a->urgent_by_us < b->urgent_by_us;
    return a->seq < b->seq;
}

static void heap_place(rl_send_queue *q, size_t i, rl_queued_extension e)
{
    q->extends[i] = e;
    e.req->queue_index = i;
}

static void heap_up(rl_send_queue *q, size_t i)
{
    rl_queued_extension e = q->extends[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!heap_before(&e, &q->extends[parent]))
            break;
        heap_place(q, i, q->extends[parent]);
        i = parent;
    }
    heap_place(q, i, e);
}

static void heap_down(rl_send_queue *q, size_t i)
{
    rl_queued_extension e = q->extends[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= q->extend_count)
            break;
        if (child + 1 < q->extend_count && heap_before(&q->extends[child + 1], &q->extends[child]))
            child++;
        if (!heap_before(&q->extends[child], &e))
            break;
        heap_place(q, i, q->extends[child]);
        i = child;
    }
    heap_place(q, i, e);
}

/* Take the heap's element at i out. */
static void heap_remove_at(rl_send_queue *q, size_t i)
{
    rl_queued_extension last = q->extends[--q->extend_count];
    if (i != q->extend_count) {
        heap_place(q, i, last);
        heap_up(q, i);
        heap_down(q, last.req->queue_index);
    }
    /* A burst's memory is given back once it has gone out. */
    if (q->extend_cap > RL_SEND_QUEUE_MIN_CAP && q->extend_count < q->extend_cap / 4) {
        rl_queued_extension *shrunk =
            realloc(q->extends, q->extend_cap / 2 * sizeof(rl_queued_extension));
        if (shrunk != NULL) {
            q->extends = shrunk;
            q->extend_cap /= 2;
        }
    }
}

/* Whether a request of lock tag waits among the rest. Releases come in
 * bursts when the rest is short (they follow acquires by the time a lock
 * is held), so the walk is short. */
static bool others_hold(const rl_send_queue *q, uint64_t tag)
{
    for (const rl_link *l = q->others.next; l != &q->others; l = l->next)
        if (rl_container_of(l, rl_request, link)->lock_tag == tag)
            return true;
    return false;
}

bool rl_send_queue_push(rl_send_queue *q, rl_request *req)
{
    req->queue_seq = q->next_seq++;
    if (!is_extension(req)) {
        bool release = req->queue_class == RL_REQUEST_RELEASE &&
                       (req->lock_tag == 0 || !others_hold(q, req->lock_tag));
        rl_list_push_back(release ? &q->releases : &q->others, &req->link);
        q->count++;
        return true;
    }
    if (q->extend_count == q->extend_cap) {
        size_t cap = q->extend_cap ? q->extend_cap * 2 : RL_SEND_QUEUE_MIN_CAP;
        rl_queued_extension *grown = realloc(q->extends, cap * sizeof(rl_queued_extension));
        if (grown == NULL)
            return false;
        q->extends = grown;
        q->extend_cap = cap;
    }
    rl_queued_extension e = {req->urgent_by_us, req->queue_seq, req};
    heap_place(q, q->extend_count++, e);
    heap_up(q, req->queue_index);
    q->count++;
    return true;
}

rl_request *rl_send_queue_pop(rl_send_queue *q)
{
    rl_request *req = rl_send_queue_peek(q, true);
    if (req != NULL) {
        rl_send_queue_remove(q, req);
        rl_send_queue_sent(q, req);
    }
    return req;
}

const rl_request *rl_send_queue_next_extension(const rl_send_queue *q)
{
    return q->extend_count > 0 ? q->extends[0].req : NULL;
}

static rl_request *first_of(const rl_link *fifo)
{
    return rl_list_empty(fifo) ? NULL : rl_container_of(fifo->next, rl_request, link);
}

rl_request *rl_send_queue_peek(const rl_send_queue *q, bool extensions)
{
    rl_request *release = first_of(&q->releases);
    rl_request *extension = extensions && q->extend_count > 0 ? q->extends[0].req : NULL;
    if (release != NULL && extension != NULL)
        return q->extension_turn ? extension : release;
    if (release != NULL)
        return release;
    if (extension != NULL)
        return extension;
    return first_of(&q->others);
}

rl_request *rl_send_queue_peek_after(const rl_send_queue *q, const rl_request *first)
{
    if (is_extension(first))
        return q->extend_count > 0 ? q->extends[0].req : NULL;
    /* first's FIFO is whichever list its link was in: a release that
     * waits behind a request of its lock is among the rest. */
    rl_request *release = first_of(&q->releases);
    if (first->queue_class == RL_REQUEST_RELEASE && release != NULL)
        return release;
    return first_of(&q->others);
}

void rl_send_queue_sent(rl_send_queue *q, const rl_request *first)
{
    q->extension_turn = !is_extension(first);
}

void rl_send_queue_remove(rl_send_queue *q, rl_request *req)
{
    if (is_extension(req))
        heap_remove_at(q, req->queue_index);
    else
        rl_list_remove(&req->link);
    q->count--;
}
