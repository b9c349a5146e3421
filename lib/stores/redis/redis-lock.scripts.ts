import { createHash } from 'node:crypto';

/**
 * Every Lua script of the Redis store. Each touches only the keys it is given, so in Redis
 * Cluster it runs on one slot as long as those keys share a hash tag.
 */
export interface LuaScript {
  readonly body: string;
  readonly sha: string;
}

function lua(body: string): LuaScript {
  return { body, sha: createHash('sha1').update(body).digest('hex') };
}

/**
 * Takes all lock keys, or none.
 * KEYS: the n lock keys, then (when fencing) their n fence counter keys.
 * ARGV[1]: owner token; ARGV[2]: ttl in ms; ARGV[3]: '1' to fence, '0' not to.
 * Returns {1, fence_1, ..., fence_n} (fences only when fencing) when taken, or
 * {0, pttl}: the longest remaining lease among the held keys (-1 if one has no expiry).
 */
export const ACQUIRE = lua(`
local fencing = ARGV[3] == '1'
local n = fencing and #KEYS / 2 or #KEYS
if n == 1 then
  if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    if fencing then return {1, redis.call('INCR', KEYS[2])} end
    return {1}
  end
  return {0, redis.call('PTTL', KEYS[1])}
end
local longest = -2
for i = 1, n do
  local pttl = redis.call('PTTL', KEYS[i])
  if pttl == -1 then return {0, -1} end
  if pttl > longest then longest = pttl end
end
if longest ~= -2 then return {0, longest} end
local result = {1}
for i = 1, n do
  redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
  if fencing then result[i + 1] = redis.call('INCR', KEYS[n + i]) end
end
return result
`);

/**
 * Compare-and-delete, then wake the waiters of each released key.
 * KEYS: the n lock keys. ARGV[1]: owner token; ARGV[2]: 'PUBLISH', 'SPUBLISH', or '' to wake
 * nobody (giving back a lock nobody used); ARGV[3..n+2]: the release channel of each key.
 * Returns {outcome, subscribers}: outcome 1 if every key was ours and is deleted, 0 if one had
 * expired (and none was stolen), -1 if another owner holds one (that key is left untouched);
 * subscribers: how many connections the notifications reached.
 */
export const RELEASE = lua(`
local outcome = 1
local subscribers = 0
for i = 1, #KEYS do
  local holder = redis.call('GET', KEYS[i])
  if holder == ARGV[1] then
    redis.call('DEL', KEYS[i])
    if ARGV[2] ~= '' then subscribers = subscribers + redis.call(ARGV[2], ARGV[i + 2], '') end
  elseif holder then
    outcome = -1
  elseif outcome == 1 then
    outcome = 0
  end
end
return {outcome, subscribers}
`);

/**
 * Compare-and-PEXPIRE for many leases in one call.
 * KEYS: one lock key per lease key. ARGV[i]: token for KEYS[i]; ARGV[n+i]: ttl in ms for KEYS[i].
 * Returns one code per key: 1 extended, 0 expired (key gone), -1 held by another owner.
 */
export const EXTEND = lua(`
local n = #KEYS
local result = {}
for i = 1, n do
  local holder = redis.call('GET', KEYS[i])
  if holder == ARGV[i] then
    redis.call('PEXPIRE', KEYS[i], ARGV[n + i])
    result[i] = 1
  elseif holder then
    result[i] = -1
  else
    result[i] = 0
  end
end
return result
`);

/**
 * Applies writes only for a writer whose fence is at least the newest fence already applied to
 * the resource, and records its fence. A holder that paused past its lease (so a newer holder
 * has written since) is turned away.
 * KEYS[1]: the resource's fence key; KEYS[1 + i]: the key of write i.
 * ARGV[1]: the writer's fence; then, per write: command name, argument count, arguments.
 * Returns {1, {reply_1, ...}} when applied, or {0, newest_fence} when the writer is stale.
 */
export const FENCED_WRITE = lua(`
local newest = tonumber(redis.call('GET', KEYS[1]) or '0')
local fence = tonumber(ARGV[1])
if fence < newest then return {0, newest} end
if fence > newest then redis.call('SET', KEYS[1], ARGV[1]) end
local replies = {}
local at = 2
for i = 2, #KEYS do
  local argc = tonumber(ARGV[at + 1])
  replies[i - 1] = redis.call(ARGV[at], KEYS[i], unpack(ARGV, at + 2, at + 1 + argc))
  at = at + 2 + argc
end
return {1, replies}
`);
