/* SPDX-License-Identifier: BSD-3-Clause */
/* An intrusive doubly linked list: the node lives inside the element. */
#ifndef REDLOCK_LIST_H
#define REDLOCK_LIST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct rl_link {
    struct rl_link *prev;
    struct rl_link *next;
} rl_link;

#define rl_container_of(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* A head, or a node not in any list, points at itself. */
static inline void rl_list_init(rl_link *link)
{
    link->prev = link->next = link;
}

static inline bool rl_list_empty(const rl_link *head)
{
    return head->next == head;
}

static inline void rl_list_push_back(rl_link *head, rl_link *node)
{
    node->prev = head->prev;
    node->next = head;
    head->prev->next = node;
    head->prev = node;
}

/* Unlink node (a no-op for an unlinked node) and leave it self-linked. */
static inline void rl_list_remove(rl_link *node)
{
    node->prev->next = node->next;
    node->next->prev = node->prev;
    rl_list_init(node);
}

/* Remove and return the first node, or NULL. */
static inline rl_link *rl_list_pop_front(rl_link *head)
{
    if (rl_list_empty(head))
        return NULL;
    rl_link *node = head->next;
    rl_list_remove(node);
    return node;
}

#endif
