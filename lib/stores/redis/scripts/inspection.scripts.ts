import { MAX_IN_LINE, PASS_TURN } from './lua-helpers.js';
import { lua, publishing } from './lua-script.js';

/*
 * What an operator reads and does at one lock key. Each read is bounded: a holder set is read
 * by ranges with a LIMIT and counted by ZCOUNT (O(log n)), never walked whole, and a turn list
 * holds at most MAX_IN_LINE entries. `now` is the server's clock in ms, as holder sets score
 * their leases with it.
 */
const NOW_MS = `
local function now_ms()
  local t = redis.call('TIME')
  return t[1] * 1000 + math.floor(t[2] / 1000)
end
`;

/**
 * Everything `inspect` shows, in one call.
 * KEYS[1]: the lock key; KEYS[2]: its turn list; KEYS[3]: its waiting writer's mark; KEYS[4]: its
 * fence counter. ARGV[1]: the most holders to list.
 * Returns {type} when the key is neither a string nor a sorted set (free, or not a lock);
 * for a mutex {'string', fence, writer, line, value, pttl}; for a holder set {'zset', fence,
 * writer, line, now, live, last, holders}: `live` counts live holders, `last` is the set's last
 * member (a semaphore's 'L' .. limit), `holders` the first ARGV[1] live members by lease end,
 * with their scores. `fence` and `writer` are '' when absent; `line` is the turn list.
 */
export const INSPECT = lua(`${NOW_MS}
local key_type = redis.call('TYPE', KEYS[1]).ok
if key_type ~= 'string' and key_type ~= 'zset' then return {key_type} end
local fence = redis.call('GET', KEYS[4]) or ''
local writer = redis.call('GET', KEYS[3]) or ''
local line = redis.call('LRANGE', KEYS[2], 0, ${MAX_IN_LINE - 1})
if key_type == 'string' then
  local value = redis.call('GET', KEYS[1])
  return {key_type, fence, writer, line, value, redis.call('PTTL', KEYS[1])}
end
local now = now_ms()
local live = redis.call('ZCOUNT', KEYS[1], '(' .. now, '(+inf')
local last = redis.call('ZRANGE', KEYS[1], -1, -1)[1] or ''
local holders = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '(+inf', 'WITHSCORES', 'LIMIT', 0, ARGV[1])
return {key_type, fence, writer, line, now, live, last, holders}
`);

/**
 * A row of `list`: what a key holds, read in O(log n).
 * KEYS[1]: the lock key.
 * Returns {type} when the key is neither a string nor a sorted set with a live holder; for a
 * mutex {'string', pttl, value}; for a holder set {'zset', pttl, live, last, first}: the key's
 * PTTL (its longest lease), the live holder count, the last member (see INSPECT) and the live
 * member whose lease ends first.
 */
export const SUMMARY = lua(`${NOW_MS}
local key_type = redis.call('TYPE', KEYS[1]).ok
if key_type == 'string' then
  local pttl = redis.call('PTTL', KEYS[1])
  return {key_type, pttl, redis.call('GET', KEYS[1])}
end
if key_type ~= 'zset' then return {key_type} end
local now = now_ms()
local first = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '(+inf', 'LIMIT', 0, 1)[1]
if not first then return {'none'} end
local live = redis.call('ZCOUNT', KEYS[1], '(' .. now, '(+inf')
local last = redis.call('ZRANGE', KEYS[1], -1, -1)[1]
return {key_type, redis.call('PTTL', KEYS[1]), live, last, first}
`);

/**
 * Removes a lock whatever its holders, and wakes its waiters as a release does: a mutex goes to
 * the first process in its turn list (see PASS_TURN), a holder set wakes everyone in its list,
 * which it empties. A waiting writer's mark stays: that writer still waits. The fence counter
 * stays, so fences keep growing. The holders' processes are told by the caller, on a channel of
 * the key prefix's slot (see `forcedChannelOf`), which a Cluster script could not publish to.
 * KEYS[1]: the lock key; KEYS[2]: its turn list. No ARGV.
 * Returns the mutex's value (its holder's token, or a reservation), '' for a holder set, or
 * nil when the key held no lock.
 */
export const FORCE_RELEASE = publishing(
  (publish) => `
local key_type = redis.call('TYPE', KEYS[1]).ok
if key_type ~= 'string' and key_type ~= 'zset' then return nil end
${PASS_TURN}
local holder = ''
if key_type == 'string' then holder = redis.call('GET', KEYS[1]) end
redis.call('UNLINK', KEYS[1])
local turn = ''
if key_type == 'zset' then
  redis.call('DEL', KEYS[2])
else
  turn = pass_turn(KEYS[1], KEYS[2], '', lookahead_of(1)) or ''
end
redis.call('${publish}', channel_of(KEYS[2]), turn)
return holder
`,
);
