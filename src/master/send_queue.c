/* SPDX-License-Identifier: BSD-3-Clause */
/* One master's requests waiting for room in its window. See send_queue.h. */
#include "master/send_queue.h"
#include "round/quorum.h"
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
static bool is_extension(const rl_slot *slot)
{
    return slot->round->kind == RL_ROUND_EXTEND;
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
    e.slot->queue_index = i;
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
        heap_down(q, last.slot->queue_index);
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
        if (rl_container_of(l, rl_slot, link)->round->lock_tag == tag)
            return true;
    return false;
}

bool rl_send_queue_push(rl_send_queue *q, rl_slot *slot)
{
    slot->queue_seq = q->next_seq++;
    if (!is_extension(slot)) {
        const rl_round *round = slot->round;
        bool release = round->kind == RL_ROUND_RELEASE &&
                       (round->lock_tag == 0 || !others_hold(q, round->lock_tag));
        rl_list_push_back(release ? &q->releases : &q->others, &slot->link);
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
    rl_queued_extension e = {slot->round->urgent_by_us, slot->queue_seq, slot};
    heap_place(q, q->extend_count++, e);
    heap_up(q, slot->queue_index);
    q->count++;
    return true;
}

rl_slot *rl_send_queue_pop(rl_send_queue *q)
{
    rl_slot *slot = rl_send_queue_peek(q, true);
    if (slot != NULL) {
        rl_send_queue_remove(q, slot);
        rl_send_queue_sent(q, slot);
    }
    return slot;
}

const rl_slot *rl_send_queue_next_extension(const rl_send_queue *q)
{
    return q->extend_count > 0 ? q->extends[0].slot : NULL;
}

static rl_slot *first_of(const rl_link *fifo)
{
    return rl_list_empty(fifo) ? NULL : rl_container_of(fifo->next, rl_slot, link);
}

rl_slot *rl_send_queue_peek(const rl_send_queue *q, bool extensions)
{
    rl_slot *release = first_of(&q->releases);
    rl_slot *extension = extensions && q->extend_count > 0 ? q->extends[0].slot : NULL;
    if (release != NULL && extension != NULL)
        return q->extension_turn ? extension : release;
    if (release != NULL)
        return release;
    if (extension != NULL)
        return extension;
    return first_of(&q->others);
}

rl_slot *rl_send_queue_peek_after(const rl_send_queue *q, const rl_slot *first)
{
    if (is_extension(first))
        return q->extend_count > 0 ? q->extends[0].slot : NULL;
    /* first's FIFO is whichever list its link was in: a release that
     * waits behind a request of its lock is among the rest. */
    rl_slot *release = first_of(&q->releases);
    if (first->round->kind == RL_ROUND_RELEASE && release != NULL)
        return release;
    return first_of(&q->others);
}

void rl_send_queue_sent(rl_send_queue *q, const rl_slot *first)
{
    q->extension_turn = !is_extension(first);
}

void rl_send_queue_remove(rl_send_queue *q, rl_slot *slot)
{
    if (is_extension(slot))
        heap_remove_at(q, slot->queue_index);
    else
        rl_list_remove(&slot->link);
    q->count--;
}
