import { HOLDER_OF, JOIN_LINE, NEXT_FENCE, WITH_MARK } from './lua-helpers.js';
import { lua } from './lua-script.js';

/*
 * An acquire may reach Redis twice: a client that resends unanswered commands after a reconnect
 * sends it again. Each script therefore treats a key that already holds the caller's token as
 * free, so the resent acquire wins again instead of finding the caller "busy" on its own key.
 */

/**
 * Looks at a key that `SET NX` found taken.
 * KEYS[1]: the lock key. ARGV[1]: the caller's token.
 * Returns -3 if the key holds the caller's token (the SET was applied before, then sent again),
 * {held_as} if it is a semaphore or read-write lock (see HOLDER_OF), else its PTTL: the
 * holder's remaining lease, -1 for none, -2 if it is gone.
 */
export const LOOK_AT_HOLDER = lua(`${HOLDER_OF}
local holder = holder_of(KEYS[1])
if holder == '' then return {held_as(KEYS[1])} end
if holder == ARGV[1] then return -3 end
return redis.call('PTTL', KEYS[1])
`);

/**
 * Takes all lock keys, or none.
 * KEYS: the n lock keys, then (when fencing) their n fence counters, then (when listening) their
 * n turn lists.
 * ARGV[1]: owner token; ARGV[2]: ttl in ms; ARGV[3]: '1' to fence, '0' not to; ARGV[4]
 * (optional): the id of a listening queue, entered as a listener in the turn list of every busy
 * key, and taken out of all of them when the keys are taken.
 * Returns {1, fence_1, ..., fence_n} (fences only when fencing) when taken,
 * {0, pttl}: the longest remaining lease among the held keys (-1 if one has no expiry), or
 * {-1, held_as} when a key is a semaphore or read-write lock (see HOLDER_OF).
 */
export const ACQUIRE = lua(`
local fencing, listener = ARGV[3] == '1', ARGV[4] and '*' .. ARGV[4]
local groups = 1 + (fencing and 1 or 0) + (listener and 1 or 0)
local n = #KEYS / groups
local lines = (groups - 1) * n
${NEXT_FENCE}
${WITH_MARK}
-- The listener leaves the line of a key it took.
local function take_out(key, turns_key)
  redis.call('LREM', turns_key, 0, listener)
  local value = with_mark(turns_key, ARGV[1])
  if value ~= ARGV[1] then redis.call('SET', key, value, 'XX', 'KEEPTTL') end
end
-- A single key is taken by SET NX, with no look first.
if n == 1 and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if listener then take_out(KEYS[1], KEYS[lines + 1]) end
  if fencing then return {1, next_fence(KEYS[2], ARGV[2])} end
  return {1}
end
${JOIN_LINE}
${HOLDER_OF}
local longest = -2
for i = 1, n do
  local pttl = -2
  local holder, marked = holder_of(KEYS[i])
  if holder == '' then return {-1, held_as(KEYS[i])} end
  if holder and holder ~= ARGV[1] then pttl = redis.call('PTTL', KEYS[i]) end
  if pttl ~= -2 then
    if listener then
      join_line(KEYS[lines + i], listener)
      mark_waiters(KEYS[i], holder, marked)
    end
    if longest ~= -1 and (pttl == -1 or pttl > longest) then longest = pttl end
  end
end
if longest ~= -2 then return {0, longest} end
local result = {1}
for i = 1, n do
  redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
  if fencing then result[i + 1] = next_fence(KEYS[n + i], ARGV[2]) end
  if listener then take_out(KEYS[i], KEYS[lines + i]) end
end
return result
`);

/**
 * Takes a single key for the head of a process's wait queue, or else puts that queue in the
 * key's turn list, so processes get a busy key in the order they came.
 * KEYS[1]: the lock key; KEYS[2]: its turn list; KEYS[3]: its fence counter (when fencing).
 * ARGV[1]: owner token; ARGV[2]: ttl in ms; ARGV[3]: queue id; ARGV[4]: '1' to fence, '0' not
 * to.
 * Returns {1} or {1, fence} when taken (the key was free, reserved for this queue, or already
 * the caller's), {0, pttl} when busy, or {-1, held_as} as ACQUIRE.
 */
export const ACQUIRE_IN_TURN = lua(`${HOLDER_OF}
local holder, marked = holder_of(KEYS[1])
if holder == '' then return {-1, held_as(KEYS[1])} end
if not holder or holder == 'turn:' .. ARGV[3] or holder == ARGV[1] then
  redis.call('LREM', KEYS[2], 0, ARGV[3])
  ${WITH_MARK}
  redis.call('SET', KEYS[1], with_mark(KEYS[2], ARGV[1]), 'PX', ARGV[2])
  if ARGV[4] == '1' then
    ${NEXT_FENCE}
    return {1, next_fence(KEYS[3], ARGV[2])}
  end
  return {1}
end
${JOIN_LINE}
join_line(KEYS[2], ARGV[3])
mark_waiters(KEYS[1], holder, marked)
return {0, redis.call('PTTL', KEYS[1])}
`);
