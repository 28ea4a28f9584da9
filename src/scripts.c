/* SPDX-License-Identifier: BSD-3-Clause */
/* The Lua scripts that make release, extend and inspect atomic on each
 * master, and the EVAL fallback of their EVALSHA requests. */
#include "scripts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Compare-and-delete: never a plain DEL, which could delete the key of the
 * next holder after ours expired. A delete is announced on the channel
 * (channel.h), so that waiters try again at once, and the reply counts who
 * heard it (1 + subscribers); pcall, because a user the ACL denies the
 * channel must still be able to release. */
const rl_script rl_release_script = {
    "release",
    "local v = redis.call('GET', KEYS[1])\n"
    "if v == ARGV[1] then\n"
    "  redis.call('DEL', KEYS[1])\n"
    "  if ARGV[2] then\n"
    "    local heard = redis.pcall('PUBLISH', ARGV[2], ARGV[1])\n"
    "    if type(heard) == 'number' then\n"
    "      return 1 + heard\n"
    "    end\n"
    "  end\n"
    "  return 1\n"
    "elseif v == false then\n"
    "  return 0\n"
    "end\n"
    "return -1\n",
    "76ba2953b621feed3d3233ffd2e4c3d548b7d233",
};

/* Compare-and-PEXPIRE, for the same reason. */
const rl_script rl_extend_script = {
    "extend",
    "local v = redis.call('GET', KEYS[1])\n"
    "if v == ARGV[1] then\n"
    "  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
    "  return 1\n"
    "elseif v == false then\n"
    "  return 0\n"
    "end\n"
    "return -1\n",
    "484a60dbe77162d910e62ea14f38f05bbbcfd169",
};

/* One atomic read, so value and PTTL describe the same instant. */
const rl_script rl_inspect_script = {
    "inspect",
    "local v = redis.call('GET', KEYS[1])\n"
    "return {v, redis.call('PTTL', KEYS[1])}\n",
    "2b48ff4ab97464b3b4c9678c454338104155b8e3",
};

long rl_evalsha_to_eval(const char *cmd, size_t len, const rl_script *script, char **out)
{
    /* An EVALSHA request is "*<argc>\r\n$7\r\nEVALSHA\r\n$40\r\n<sha>\r\n"
     * followed by the other arguments, which EVAL takes unchanged. */
    *out = NULL;
    const char *header_end = memchr(cmd, '\n', len);
    if (cmd[0] != '*' || header_end == NULL)
        return -1;
    size_t header_len = (size_t)(header_end - cmd) + 1;
    static const char evalsha[] = "$7\r\nEVALSHA\r\n$40\r\n";
    size_t sha_at = header_len + sizeof(evalsha) - 1;
    size_t rest_at = sha_at + 40 + 2;
    if (len < rest_at || memcmp(cmd + header_len, evalsha, sizeof(evalsha) - 1) != 0 ||
        memcmp(cmd + sha_at, script->sha, 40) != 0)
        return -1;

    size_t source_len = strlen(script->source);
    char length_line[32];
    int length_len = snprintf(length_line, sizeof(length_line), "$%zu\r\n", source_len);
    static const char eval[] = "$4\r\nEVAL\r\n";
    size_t total = header_len + (sizeof(eval) - 1) + (size_t)length_len + source_len + 2 +
                   (len - rest_at);
    char *p = malloc(total + 1);
    if (p == NULL)
        return -1;
    char *w = p;
    memcpy(w, cmd, header_len), w += header_len;
    memcpy(w, eval, sizeof(eval) - 1), w += sizeof(eval) - 1;
    memcpy(w, length_line, (size_t)length_len), w += length_len;
    memcpy(w, script->source, source_len), w += source_len;
    memcpy(w, "\r\n", 2), w += 2;
    memcpy(w, cmd + rest_at, len - rest_at);
    p[total] = '\0';
    *out = p;
    return (long)total;
}
