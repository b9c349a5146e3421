import { CHANNEL_OF, JOIN_LINE, NEXT_FENCE, SCORE_OF } from './lua-helpers.js';
import { lua, publishing } from './lua-script.js';

/** The most ended leases one script drops from a holder set; the rest go in later calls. */
export const PRUNE_SLICE = 200;

/*
 * Semaphores and read-write locks keep their holders in one sorted set at the lock key (a
 * holder set): each member is a holder's token behind a letter that says how it holds, 's'
 * (semaphore), 'r' (reader) or 'w' (writer), scored with the server time (ms) its lease ends.
 * A semaphore's set also holds its limit, as 'L' .. limit scored +inf, so that it ranks last;
 * it means something only while a holder is live, and goes with the last one. The key expires
 * with its longest live lease, which every script that moves a lease end keeps true. A lock key
 * is thus a string for a mutex and a sorted set for the other kinds, so that no two kinds can
 * hold one key at once, and each sees how the other holds it.
 * `now_ms` reads the server clock; `prune` returns the live holder count, exact however many
 * ended leases the set still holds, and the last member (the limit, if any, else the longest
 * lease), and drops the ended leases that ended first, at most PRUNE_SLICE a call (the set is
 * scored by lease end); with no live holder left it drops none, as the caller unlinks the set.
 * `first_live` gives the live lease that ends first, and its end; `follow_leases` sets the key
 * to expire with its longest live lease, or unlinks it when none is left. Each is O(log n) in
 * the set's size, plus the members it drops; UNLINK frees a set still full of ended leases away
 * from Redis's main thread.
 */
const HOLDER_SET = `
local function now_ms()
  local t = redis.call('TIME')
  return t[1] * 1000 + math.floor(t[2] / 1000)
end
local function prune(key, now)
  local ended = redis.call('ZCOUNT', key, '-inf', now)
  local count = redis.call('ZCARD', key) - ended
  local last = redis.call('ZRANGE', key, -1, -1)[1]
  if last and string.byte(last) == 76 then count = count - 1 end
  if count > 0 and ended > 0 then
    redis.call('ZREMRANGEBYRANK', key, 0, math.min(ended, ${PRUNE_SLICE}) - 1)
  end
  return count, last
end
local function first_live(key, now)
  return redis.call('ZRANGEBYSCORE', key, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
end
local function follow_leases(key, now)
  local ends = redis.call('ZREVRANGEBYSCORE', key, '(+inf', '-inf', 'WITHSCORES', 'LIMIT', 0, 1)[2]
  if ends and tonumber(ends) > now then
    redis.call('PEXPIRE', key, tonumber(ends) - now)
  else
    redis.call('UNLINK', key)
  end
end
`;

/**
 * Takes a place in a holder set, or else enters the caller's queue as a listener, and a writer
 * that will wait marks itself as waiting, which holds new readers back. A writer's win clears
 * the mark, whichever attempt of whichever writer set it: other writers still waiting renew it
 * on their next attempt.
 * KEYS[1]: the lock key; KEYS[2]: its list of waiters; KEYS[3]: its waiting writer's mark;
 * KEYS[4]: its fence counter.
 * ARGV[1]: the member ('s', 'r' or 'w' .. token); ARGV[2]: ttl in ms; ARGV[3]: the semaphore's
 * limit, or a writer's patience in ms (how long its mark lasts; '' not to mark), or ''; ARGV[4]: '1' to fence;
 * ARGV[5]: the caller's queue id, or ''.
 * Returns {1} or {1, fence} when taken; {0, pttl}: the wait until a lease in the way ends; or
 * {-1, held_as} when the key is held as another kind or limit: 'MUTEX', 'RW' or 'L' .. limit.
 */
export const ACQUIRE_HOLDER = lua(`${HOLDER_SET}
local key, member, ttl = KEYS[1], ARGV[1], tonumber(ARGV[2])
local kind = string.sub(member, 1, 1)
local key_type = redis.call('TYPE', key).ok
if key_type ~= 'none' and key_type ~= 'zset' then return {-1, 'MUTEX'} end
local now = now_ms()
local count, last = prune(key, now)
-- Kinds and limits are those of live holders only: a set without any (a semaphore's limit
-- left behind) holds nothing, and is started afresh.
if count == 0 and last then redis.call('UNLINK', key) end
if count > 0 then
  local limited = string.byte(last) == 76
  if kind == 's' and last ~= 'L' .. ARGV[3] then return {-1, limited and last or 'RW'} end
  if kind ~= 's' and limited then return {-1, last} end
end
local busy
local mine = redis.call('ZSCORE', key, member)
if mine and tonumber(mine) > now then
  busy = nil -- taken before, and this attempt sent again
elseif kind == 's' then
  if count >= tonumber(ARGV[3]) then busy = first_live(key, now)[2] - now end
elseif kind == 'w' then
  if count > 0 then
    busy = redis.call('PTTL', key)
    if ARGV[3] ~= '' then
      redis.call('SET', KEYS[3], ARGV[5] ~= '' and ARGV[5] or member, 'PX', ARGV[3])
    end
  end
else
  local first = first_live(key, now)
  if first[1] and string.byte(first[1]) == 119 then
    busy = first[2] - now
  else
    local waits = redis.call('PTTL', KEYS[3])
    if waits > 0 then busy = math.max(waits, redis.call('PTTL', key)) end
  end
end
${JOIN_LINE}
if busy then
  if ARGV[5] ~= '' then join_line(KEYS[2], '*' .. ARGV[5]) end
  return {0, math.max(math.floor(busy), 0)}
end
-- The key's expiry is set before the set is written, so that a refused PEXPIRE leaves no set
-- without one (a script that fails does not undo its writes); a new set gets it after.
local key_ttl = redis.call('PTTL', key)
if key_ttl < ttl then redis.call('PEXPIRE', key, ttl) end
if kind == 's' and count == 0 then redis.call('ZADD', key, '+inf', 'L' .. ARGV[3]) end
redis.call('ZADD', key, now + ttl, member)
if key_ttl == -2 then redis.call('PEXPIRE', key, ttl) end
if ARGV[5] ~= '' then redis.call('LREM', KEYS[2], 0, '*' .. ARGV[5]) end
if kind == 'w' then redis.call('DEL', KEYS[3]) end
if ARGV[4] == '1' then
  ${NEXT_FENCE}
  return {1, next_fence(KEYS[4], ttl)}
end
return {1}
`);

/**
 * Leaves a holder set, and wakes everyone in the list of waiters, which it empties: each comes
 * back into it if its next attempt fails.
 * KEYS[1]: the lock key; KEYS[2]: its list of waiters. ARGV[1]: the member; ARGV[2]: '1' to wake
 * nobody (giving back a place nobody used).
 * Returns (outcome + 1) + 16 * subscribers, as RELEASE: outcome 1 if the lease was live, 0 if
 * it had ended or was gone, -1 if the key is now a mutex's.
 */
export const RELEASE_HOLDER = publishing(
  (publish) => `${HOLDER_SET}
${SCORE_OF}
local key = KEYS[1]
local ends = score_of(key, ARGV[1])
local outcome = 0
if ends == '' then
  outcome = -1
elseif ends then
  redis.call('ZREM', key, ARGV[1])
  local now = now_ms()
  if tonumber(ends) > now then outcome = 1 end
  -- A semaphore's limit goes with its last live holder; the key lives as long as the longest.
  if prune(key, now) == 0 then redis.call('UNLINK', key) else follow_leases(key, now) end
end
if ARGV[2] == '1' or redis.call('EXISTS', KEYS[2]) == 0 then return outcome + 1 end
${CHANNEL_OF}
redis.call('DEL', KEYS[2])
return (outcome + 1) + 16 * redis.call('${publish}', channel_of(KEYS[2]), '')
`,
);

/**
 * For EXTEND: `extend_member` re-arms a holder-set member's lease to `ttl` ms from now, if it
 * has not ended, shorter or longer, and the key's expiry with it (see `follow_leases`).
 * Returns 1 extended, 0 ended or gone, -1 if the key is now a mutex's.
 */
export const EXTEND_MEMBER = `${HOLDER_SET}
${SCORE_OF}
local function extend_member(key, member, ttl)
  local ends = score_of(key, member)
  if ends == '' then return -1 end
  if not ends then return 0 end
  local now = now_ms()
  if tonumber(ends) <= now then
    redis.call('ZREM', key, member)
    return 0
  end
  redis.call('ZADD', key, now + ttl, member)
  follow_leases(key, now)
  return 1
end
`;
