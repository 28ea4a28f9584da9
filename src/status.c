/* The status table: messages and names generated from REDLOCK_STATUS_MAP. */
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
    static const char *const names[] = {
        [REDLOCK_MASTER_OK] = "ok",
        [REDLOCK_MASTER_HELD] = "held",
        [REDLOCK_MASTER_ABSENT] = "absent",
        [REDLOCK_MASTER_TIMEOUT] = "timeout",
        [REDLOCK_MASTER_NOT_CONNECTED] = "not-connected",
        [REDLOCK_MASTER_AUTH_FAILED] = "auth-failed",
        [REDLOCK_MASTER_ERROR] = "error",
        [REDLOCK_MASTER_PENDING] = "pending",
    };
    if (outcome < 0 || (size_t)outcome >= sizeof(names) / sizeof(names[0]))
        return "unknown";
    return names[outcome];
}
