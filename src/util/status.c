/* SPDX-License-Identifier: BSD-3-Clause */
/* The names of statuses, per-master outcomes and lock states, generated from
 * their tables (REDLOCK_STATUS_MAP, REDLOCK_MASTER_OUTCOME_MAP,
 * REDLOCK_LOCK_STATE_MAP). */
#include "redlock/redlock.h"

const char *redlock_strerror(int status)
{
    switch (status) {
#define RL_STATUS_MESSAGE_(name, value, msg)                                                       \
    case REDLOCK_##name:                                                                           \
        return msg;
        REDLOCK_STATUS_MAP(RL_STATUS_MESSAGE_)
#undef RL_STATUS_MESSAGE_
    }
    return "unknown status";
}

const char *redlock_status_name(int status)
{
    switch (status) {
#define RL_STATUS_NAME_(name, value, msg)                                                          \
    case REDLOCK_##name:                                                                           \
        return "REDLOCK_" #name;
        REDLOCK_STATUS_MAP(RL_STATUS_NAME_)
#undef RL_STATUS_NAME_
    }
    return "REDLOCK_UNKNOWN";
}

const char *redlock_version(void)
{
    return REDLOCK_VERSION_STRING;
}

const char *redlock_master_outcome_name(int outcome)
{
    switch (outcome) {
#define RL_OUTCOME_NAME_(name, value, text)                                                        \
    case REDLOCK_MASTER_##name:                                                                    \
        return text;
        REDLOCK_MASTER_OUTCOME_MAP(RL_OUTCOME_NAME_)
#undef RL_OUTCOME_NAME_
    }
    return "unknown";
}

const char *redlock_clock_state_name(int state)
{
    switch (state) {
#define RL_CLOCK_STATE_NAME_(name, value, text)                                                    \
    case REDLOCK_CLOCK_##name:                                                                     \
        return text;
        REDLOCK_CLOCK_STATE_MAP(RL_CLOCK_STATE_NAME_)
#undef RL_CLOCK_STATE_NAME_
    }
    return "invalid";
}

const char *redlock_lock_state_name(int state)
{
    switch (state) {
#define RL_LOCK_STATE_NAME_(name, value, text)                                                     \
    case REDLOCK_LOCK_##name:                                                                      \
        return text;
        REDLOCK_LOCK_STATE_MAP(RL_LOCK_STATE_NAME_)
#undef RL_LOCK_STATE_NAME_
    }
    return "invalid";
}
