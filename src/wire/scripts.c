/* SPDX-License-Identifier: BSD-3-Clause */
/* The Lua scripts that make acquire (of several resources, or reentrant),
 * release, extend and inspect atomic on each master, and the EVAL fallback
 * of their EVALSHA requests.
 *
 * A lock's key is a string holding its value, or, for the reentrant form,
 * a hash: field "" holds the owner token, and each hold of that owner a
 * field named by its value, holding its deadline (the master's clock, in
 * milliseconds: TIME). A hold past its deadline is dropped when the hash is
 * next written, so that a hold whose release was lost cannot keep the key
 * from being deleted with the owner's last live hold. Every script reads the key's type first, so
 * that neither form mistakes the other's key for free or for its own; a
 * plain SET NX (another client) sees either as taken. Scripts work on all
 * of KEYS: a set of resources is acquired, extended or found absent as one.
 * A key of another type is taken to acquire; the other scripts GET it and
 * report Redis's WRONGTYPE error. */
#include "wire/scripts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the scripts that write a reentrant hash share: the master's clock
 * (TIME, which a writing script may call once commands are replicated, as
 * they always are from Redis 5), and dropping the holds past their
 * deadline. */
#define RL_LUA_EFFECTS \
    "if redis.replicate_commands then\n" \
    "  redis.replicate_commands()\n" \
    "end\n"
#define RL_LUA_HOLDS \
    RL_LUA_EFFECTS \
    "local function now_ms()\n" \
    "  local t = redis.call('TIME')\n" \
    "  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n" \
    "end\n" \
    "local function drop_lapsed(k, now)\n" \
    "  local f = redis.call('HGETALL', k)\n" \
    "  for j = 1, #f, 2 do\n" \
    "    local d = tonumber(f[j + 1])\n" \
    "    if f[j] ~= '' and (d == nil or d < now) then\n" \
    "      redis.call('HDEL', k, f[j])\n" \
    "    end\n" \
    "  end\n" \
    "end\n"

/* Sets every key or none: a key held by another value (or another owner,
 * or of the other form) makes this master vote no. Our own value already
 * there (the same attempt seen twice) counts as yes. A reentrant hold
 * joins an owner's hash and never shortens its TTL: the owner's other
 * holds count on it. */
/* Sets keys 1..nkeys or none (the acquire script says how). */
#define RL_LUA_ACQUIRE_KEYS \
    "local owner = ARGV[3]\n" \
    "for i = 1, nkeys do\n" \
    "  local t = redis.call('TYPE', KEYS[i])['ok']\n" \
    "  if t == 'string' then\n" \
    "    if owner or redis.call('GET', KEYS[i]) ~= ARGV[1] then\n" \
    "      return 0\n" \
    "    end\n" \
    "  elseif t == 'hash' then\n" \
    "    if not owner or redis.call('HGET', KEYS[i], '') ~= owner then\n" \
    "      return 0\n" \
    "    end\n" \
    "  elseif t ~= 'none' then\n" \
    "    return 0\n" \
    "  end\n" \
    "end\n" \
    "local px = tonumber(ARGV[2])\n" \
    "local now = owner and now_ms()\n" \
    "for i = 1, nkeys do\n" \
    "  if owner then\n" \
    "    drop_lapsed(KEYS[i], now)\n" \
    "    redis.call('HSET', KEYS[i], '', owner, ARGV[1], now + px)\n" \
    "    if redis.call('PTTL', KEYS[i]) < px then\n" \
    "      redis.call('PEXPIRE', KEYS[i], px)\n" \
    "    end\n" \
    "  else\n" \
    "    redis.call('SET', KEYS[i], ARGV[1], 'PX', px)\n" \
    "  end\n" \
    "end\n"

const rl_script rl_acquire_script = {
    "acquire",
    RL_LUA_HOLDS
    "local nkeys = #KEYS\n"
    RL_LUA_ACQUIRE_KEYS
    "return 1\n",
    "ade662185282018b6463085b51b308b700f79645",
};

/* The master's run_id: which run of the server this is. Read when the
 * script runs, so a counter is taken as in use only in the very run that
 * stored it (docs/fencing.md). */
#define RL_LUA_RUN_ID \
    "local function run_id()\n" \
    "  return string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')\n" \
    "end\n"

/* Round 1 of a fenced acquire: the acquire of KEYS[1..n-1], then the
 * counter in KEYS[n] if it is in use in this run. The run and the counter
 * are read first: a script stopped by an error keeps what it wrote, and a
 * user the ACL denies INFO must not be left holding keys nobody releases
 * (an error is not an OK to clean up after). */
const rl_script rl_fenced_acquire_script = {
    "fenced acquire",
    RL_LUA_HOLDS
    RL_LUA_RUN_ID
    "local nkeys = #KEYS - 1\n"
    "local run = run_id()\n"
    "local f = redis.call('HMGET', KEYS[#KEYS], 'n', 'run')\n"
    RL_LUA_ACQUIRE_KEYS
    "if f[1] and f[2] == run then\n"
    "  return {1, f[1]}\n"
    "end\n"
    "return {1, false, run}\n",
    "8f2dc07d5e5ff52a5486cc8e4372b2323a72f115",
};

/* Round 2: raise the counter to the token, but only while every key still
 * holds our value and only in the run the counter is in use in: a token
 * confirmed here is one this master will never hand out below again. The
 * token is also kept beside each key, "<token>:<value>", for as long as
 * the key lives: for inspection only, nothing decides by it. */
const rl_script rl_fence_confirm_script = {
    "fence confirm",
    RL_LUA_EFFECTS
    RL_LUA_RUN_ID
    "local n = (#KEYS - 1) / 2\n"
    "for i = 1, n do\n"
    "  local t = redis.call('TYPE', KEYS[i])['ok']\n"
    "  if t == 'none' then\n"
    "    return 0\n"
    "  elseif t == 'hash' then\n"
    "    if redis.call('HEXISTS', KEYS[i], ARGV[1]) == 0 then\n"
    "      return -1\n"
    "    end\n"
    "  elseif t ~= 'string' or redis.call('GET', KEYS[i]) ~= ARGV[1] then\n"
    "    return -1\n"
    "  end\n"
    "end\n"
    "local k = KEYS[n + 1]\n"
    "local f = redis.call('HMGET', k, 'n', 'run')\n"
    "if not f[1] or f[2] ~= run_id() then\n"
    "  return -2\n"
    "end\n"
    "if tonumber(f[1]) < tonumber(ARGV[2]) then\n"
    "  redis.call('HSET', k, 'n', ARGV[2])\n"
    "end\n"
    "for i = 1, n do\n"
    "  local p = redis.call('PTTL', KEYS[i])\n"
    "  if p > 0 then\n"
    "    redis.call('SET', KEYS[n + 1 + i], ARGV[2] .. ':' .. ARGV[1], 'PX', p)\n"
    "  end\n"
    "end\n"
    "return 1\n",
    "469d074b15ec010c2949f1ad2e4a3f7cf29826dc",
};

/* Seeding reads: {1, n} when the counter is in use in this run; {0, n}
 * when it is held but not in use (restarted since: n is what the master
 * kept, which a seed from the clock floor still never goes below); {0}
 * when there is none. */
const rl_script rl_fence_read_script = {
    "fence read",
    RL_LUA_RUN_ID
    "local f = redis.call('HMGET', KEYS[1], 'n', 'run')\n"
    "if f[1] and f[2] == run_id() then\n"
    "  return {1, f[1]}\n"
    "end\n"
    "return {0, f[1]}\n",
    "59ea503c4832f9022a3926581dd4017cbe67b938",
};

/* Seeding (and initializing) a counter not in use: n := max(n, ARGV[1]),
 * in use from now on in this run. With ARGV[2], only in that run: a seed
 * read for one run is never applied to a later one. */
const rl_script rl_fence_seed_script = {
    "fence seed",
    RL_LUA_EFFECTS
    RL_LUA_RUN_ID
    "local run = run_id()\n"
    "if ARGV[2] and ARGV[2] ~= run then\n"
    "  return -1\n"
    "end\n"
    "local f = redis.call('HMGET', KEYS[1], 'n', 'run')\n"
    "if f[1] and f[2] == run then\n"
    "  return 0\n"
    "end\n"
    "local n = ARGV[1]\n"
    "if f[1] and tonumber(f[1]) and tonumber(f[1]) > tonumber(n) then\n"
    "  n = f[1]\n"
    "end\n"
    "redis.call('HSET', KEYS[1], 'n', n, 'run', run)\n"
    "return 1\n",
    "d6148c3a6f7c1db93b9e0037099540239e39d2ad",
};

/* A token key holds "<token>:<value>" (the fence confirm script). Its
 * token and value, or, with value given, its token when it is that
 * value's; false when absent or not a token key's (pcall: a key of
 * another type there is no reason to fail). */
#define RL_LUA_TOKEN_KEYS \
    "local function token_of(k, value)\n" \
    "  local s = redis.pcall('GET', k)\n" \
    "  if type(s) ~= 'string' then\n" \
    "    return false\n" \
    "  end\n" \
    "  local c = string.find(s, ':', 1, true)\n" \
    "  if not c then\n" \
    "    return false\n" \
    "  end\n" \
    "  local held = string.sub(s, c + 1)\n" \
    "  if value and held ~= value then\n" \
    "    return false\n" \
    "  end\n" \
    "  return string.sub(s, 1, c - 1), held\n" \
    "end\n"

/* Compare-and-delete: never a plain DEL, which could delete the key of the
 * next holder after ours expired. A hold in an owner's hash is removed, and
 * the key deleted with the owner's last hold. A delete is announced on the
 * key's channel (channel.h: ARGV[2] is its prefix) so that waiters try
 * again at once, and the reply counts who heard it (1 + the most
 * subscribers of one channel); pcall, because a user the ACL denies the
 * channel must still be able to release. */
#define RL_LUA_RELEASE_BODY \
    "local n = ARGV[3] and #KEYS / 2 or #KEYS\n" \
    "local mine, other, heard = false, false, 0\n" \
    "for i = 1, n do\n" \
    "  local k = KEYS[i]\n" \
    "  local t = redis.call('TYPE', k)['ok']\n" \
    "  local freed = false\n" \
    "  if t == 'hash' then\n" \
    "    if redis.call('HDEL', k, ARGV[1]) == 1 then\n" \
    "      mine = true\n" \
    "      drop_lapsed(k, now_ms())\n" \
    "      if redis.call('HLEN', k) <= 1 then\n" \
    "        redis.call('DEL', k)\n" \
    "        freed = true\n" \
    "      end\n" \
    "    else\n" \
    "      other = true\n" \
    "    end\n" \
    "  elseif t ~= 'none' then\n" \
    "    if redis.call('GET', k) == ARGV[1] then\n" \
    "      redis.call('DEL', k)\n" \
    "      mine, freed = true, true\n" \
    "    else\n" \
    "      other = true\n" \
    "    end\n" \
    "  end\n" \
    "  if freed and ARGV[2] then\n" \
    "    local n = redis.pcall('PUBLISH', ARGV[2] .. k, ARGV[1])\n" \
    "    if type(n) == 'number' and n > heard then\n" \
    "      heard = n\n" \
    "    end\n" \
    "  end\n" \
    "end\n" \
    "for i = n + 1, #KEYS do\n" \
    "  if token_of(KEYS[i], ARGV[1]) then\n" \
    "    redis.call('DEL', KEYS[i])\n" \
    "  end\n" \
    "end\n" \
    "if mine then\n" \
    "  return 1 + heard\n" \
    "elseif other then\n" \
    "  return -1\n" \
    "end\n" \
    "return 0\n"

const rl_script rl_release_script = {
    "release",
    RL_LUA_HOLDS
    RL_LUA_TOKEN_KEYS
    RL_LUA_RELEASE_BODY,
    "e1a93dbc9dc103abd2af052d3a2e7de3c2ce1d64",
};

/* Compare-and-PEXPIRE, for the same reason; all keys or none. */
#define RL_LUA_EXTEND_BODY \
    "local n = ARGV[3] and #KEYS / 2 or #KEYS\n" \
    "local types, absent = {}, false\n" \
    "for i = 1, n do\n" \
    "  local t = redis.call('TYPE', KEYS[i])['ok']\n" \
    "  types[i] = t\n" \
    "  if t == 'hash' then\n" \
    "    if redis.call('HEXISTS', KEYS[i], ARGV[1]) == 0 then\n" \
    "      return -1\n" \
    "    end\n" \
    "  elseif t == 'none' then\n" \
    "    absent = true\n" \
    "  elseif redis.call('GET', KEYS[i]) ~= ARGV[1] then\n" \
    "    return -1\n" \
    "  end\n" \
    "end\n" \
    "if absent then\n" \
    "  return 0\n" \
    "end\n" \
    "local px = tonumber(ARGV[2])\n" \
    "local now\n" \
    "for i = 1, n do\n" \
    "  if types[i] == 'hash' then\n" \
    "    now = now or now_ms()\n" \
    "    redis.call('HSET', KEYS[i], ARGV[1], now + px)\n" \
    "  end\n" \
    "  if types[i] ~= 'hash' or redis.call('PTTL', KEYS[i]) < px then\n" \
    "    redis.call('PEXPIRE', KEYS[i], px)\n" \
    "  end\n" \
    "  if n < #KEYS then\n" \
    "    redis.call('PEXPIRE', KEYS[n + i], redis.call('PTTL', KEYS[i]))\n" \
    "  end\n" \
    "end\n" \
    "return 1\n"

const rl_script rl_extend_script = {
    "extend",
    RL_LUA_HOLDS
    RL_LUA_EXTEND_BODY,
    "8cc5da0511cf835b959c057cc47d165f2af0ed22",
};

/* The batch scripts (batch.h): the single script's body as a function
 * `one`, run for each group of keys and arguments, each under pcall so that
 * one lock's error (a key of another type) is that lock's answer alone.
 * ARGV[1] is the number of groups; each group is its key count, its
 * argument count, then its arguments; the keys are KEYS in group order.
 * Returns one element per group: what the single script would have
 * returned, or its error.
 *
 * Most groups are one plain key and no token keys (two arguments at
 * most): those go to `plain(key, arg1, arg2)` first, which answers as the
 * single script would for a string key or none, with a GET and one write,
 * and no tables or closures (the single body's TYPE and tables cost the
 * master more than the commands themselves). It returns nil for a key of
 * any other type, which `one` then answers. Its commands run under pcall
 * too, their error that lock's answer.
 *
 * A batch of such locks only has a shorter form, with no group headers:
 * ARGV[1] is "p", then each lock's two arguments in KEYS' order (what
 * the masters spend per lock is mostly its arguments). */
#define RL_LUA_BATCH_LOOP \
    "local function answer(ok, r)\n" \
    "  if not ok and not (type(r) == 'table' and r.err) then\n" \
    "    return {err = tostring(r)}\n" \
    "  end\n" \
    "  return r\n" \
    "end\n" \
    "if ARGV[1] == 'p' then\n" \
    "  local out = {}\n" \
    "  for i = 1, #KEYS do\n" \
    "    local r = plain(KEYS[i], ARGV[2 * i], ARGV[2 * i + 1])\n" \
    "    if r == nil then\n" \
    "      r = answer(pcall(one, {KEYS[i]}, {ARGV[2 * i], ARGV[2 * i + 1]}))\n" \
    "    end\n" \
    "    out[i] = r\n" \
    "  end\n" \
    "  return out\n" \
    "end\n" \
    "local out, k, a = {}, 0, 2\n" \
    "for g = 1, tonumber(ARGV[1]) do\n" \
    "  local nk, na = tonumber(ARGV[a]), tonumber(ARGV[a + 1])\n" \
    "  local r\n" \
    "  if nk == 1 and na <= 2 then\n" \
    "    r = plain(KEYS[k + 1], ARGV[a + 2], na == 2 and ARGV[a + 3] or nil)\n" \
    "  end\n" \
    "  if r == nil then\n" \
    "    local keys, args = {}, {}\n" \
    "    for i = 1, nk do\n" \
    "      keys[i] = KEYS[k + i]\n" \
    "    end\n" \
    "    for i = 1, na do\n" \
    "      args[i] = ARGV[a + 1 + i]\n" \
    "    end\n" \
    "    r = answer(pcall(one, keys, args))\n" \
    "  end\n" \
    "  out[g] = r\n" \
    "  k, a = k + nk, a + 2 + na\n" \
    "end\n" \
    "return out\n"

/* The GET of a plain key: its value, false when absent, or nil for a key
 * of another type (GET's WRONGTYPE error). */
#define RL_LUA_PLAIN_GET \
    "  local held = redis.pcall('GET', k)\n" \
    "  if type(held) == 'table' then\n" \
    "    return nil\n" \
    "  elseif held ~= v then\n" \
    "    return held and -1 or 0\n" \
    "  end\n"

/* Extend one plain key holding v: 1, 0 when absent, -1 when another's. */
#define RL_LUA_EXTEND_PLAIN \
    "local function plain(k, v, px)\n" \
    RL_LUA_PLAIN_GET \
    "  local e = redis.pcall('PEXPIRE', k, px)\n" \
    "  return type(e) == 'table' and e or 1\n" \
    "end\n"

/* Release one plain key holding v, announced on prefix..k: 1 + who heard,
 * 0 when absent, -1 when another's. */
#define RL_LUA_RELEASE_PLAIN \
    "local function plain(k, v, prefix)\n" \
    RL_LUA_PLAIN_GET \
    "  local d = redis.pcall('DEL', k)\n" \
    "  if type(d) == 'table' then\n" \
    "    return d\n" \
    "  end\n" \
    "  local heard = prefix and redis.pcall('PUBLISH', prefix .. k, v)\n" \
    "  return 1 + (type(heard) == 'number' and heard or 0)\n" \
    "end\n"

const rl_script rl_extend_batch_script = {
    "extend batch",
    RL_LUA_HOLDS
    "local function one(KEYS, ARGV)\n"
    RL_LUA_EXTEND_BODY
    "end\n"
    RL_LUA_EXTEND_PLAIN
    RL_LUA_BATCH_LOOP,
    "7b309059d40082aa88c6164ba6d64c2c9812561f",
};

const rl_script rl_release_batch_script = {
    "release batch",
    RL_LUA_HOLDS
    RL_LUA_TOKEN_KEYS
    "local function one(KEYS, ARGV)\n"
    RL_LUA_RELEASE_BODY
    "end\n"
    RL_LUA_RELEASE_PLAIN
    RL_LUA_BATCH_LOOP,
    "08139925e354066a096ddcfb275caf8137f0b464",
};

/* One atomic read, so value and PTTL describe the same instant. For a
 * reentrant key the value is its owner token; for several keys the value
 * they all hold, with the least PTTL, or nothing and -3 when they differ.
 * KEYS[n+1..2n] are the keys' token keys: the fencing token of the hold
 * that still holds the key, when all agree. */
const rl_script rl_inspect_script = {
    "inspect",
    RL_LUA_TOKEN_KEYS
    "local n = #KEYS / 2\n"
    "local value, pttl, token\n"
    "for i = 1, n do\n"
    "  local k = KEYS[i]\n"
    "  local v, t, held\n"
    "  if redis.call('TYPE', k)['ok'] == 'hash' then\n"
    "    v = redis.call('HGET', k, '')\n"
    "    t, held = token_of(KEYS[n + i])\n"
    "    if t and redis.call('HEXISTS', k, held) == 0 then\n"
    "      t = false\n"
    "    end\n"
    "  else\n"
    "    v = redis.call('GET', k)\n"
    "    t = v and token_of(KEYS[n + i], v)\n"
    "  end\n"
    "  local p = redis.call('PTTL', k)\n"
    "  if i == 1 then\n"
    "    value, pttl, token = v, p, t\n"
    "  elseif v ~= value then\n"
    "    return {false, -3, false}\n"
    "  else\n"
    "    if p < pttl then\n"
    "      pttl = p\n"
    "    end\n"
    "    if t ~= token then\n"
    "      token = false\n"
    "    end\n"
    "  end\n"
    "end\n"
    "return {value, pttl, token}\n",
    "81b29696a0d1cfdd576e3793b9ab393bb9c5d434",
};

/* A restart without persistence loses the marker; the guard, written with
 * it, is there for max_ttl_ms after: while it is, the run may have begun
 * after keys it forgot were set (its PTTL says when it was written). Only
 * GET, SET and PTTL, so that a narrow ACL may allow it. */
const rl_script rl_restart_marker_script = {
    "restart marker",
    "if not redis.call('GET', KEYS[1]) then\n"
    "  redis.call('SET', KEYS[1], 'libredlock: lost when the server loses its keys')\n"
    "  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[1])\n"
    "  return {0}\n"
    "end\n"
    "local p = redis.call('PTTL', KEYS[2])\n"
    "if p == -2 then\n"
    "  return {2}\n"
    "end\n"
    "return {1, p, redis.call('GET', KEYS[2])}\n",
    "7d189dca41ed84fb8c0014bd8ac5cf004fff626b",
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
