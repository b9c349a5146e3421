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
 * How long a key given to a process in its turn stays reserved for it, in ms. A process that
 * died, or stopped waiting, holds up the others no longer than this.
 */
export const TURN_GRACE = 500;
/** How long a key's turn list outlives its last arrival, in ms (a live waiter re-arrives sooner). */
export const TURNS_LIFETIME = 60_000;

/**
 * `join_line` puts a queue at the end of a key's turn list unless it is already in it.
 * `pass_turn` gives the released key to the process whose turn is next: its queue id is left in
 * the key as a reservation ('turn:' .. id, for TURN_GRACE ms) that only its own acquire may
 * replace, and is returned so the notification can name it. The releasing queue (`own`) is
 * skipped: it just had its turn. Returns '' when no other process waits its turn.
 * `channel_of` names a key's release channel from its turn list: both are companion keys of
 * the lock key (see key-slots.ts), '<base>:turns' and '<base>:released', so the caller need not
 * send it.
 */
const TURN_HELPERS = `
local function join_line(turns_key, id)
  if not redis.call('LPOS', turns_key, id) then redis.call('RPUSH', turns_key, id) end
end
local function pass_turn(lock_key, turns_key, own)
  local turn = redis.call('LPOP', turns_key)
  if turn and turn == own then turn = redis.call('LPOP', turns_key) end
  if not turn then return '' end
  redis.call('SET', lock_key, 'turn:' .. turn, 'PX', ${TURN_GRACE})
  return turn
end
local function channel_of(turns_key)
  return string.sub(turns_key, 1, -7) .. ':released'
end
`;

/**
 * Takes a single key for the head of a process's wait queue, or else puts that queue in the
 * key's turn list, so processes get a busy key in the order they came.
 * KEYS[1]: the lock key; KEYS[2]: its turn list; KEYS[3]: its fence counter (when fencing).
 * ARGV[1]: owner token; ARGV[2]: ttl in ms; ARGV[3]: queue id; ARGV[4]: '1' to fence, '0' not
 * to.
 * Returns {1} or {1, fence} when taken (the key was free or reserved for this queue), or
 * {0, pttl} when busy.
 */
export const ACQUIRE_IN_TURN = lua(`${TURN_HELPERS}
local holder = redis.call('GET', KEYS[1])
if not holder or holder == 'turn:' .. ARGV[3] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  redis.call('LREM', KEYS[2], 0, ARGV[3])
  if ARGV[4] == '1' then return {1, redis.call('INCR', KEYS[3])} end
  return {1}
end
join_line(KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ${TURNS_LIFETIME})
return {0, redis.call('PTTL', KEYS[1])}
`);

/**
 * Compare-and-delete; each released key goes to the next process in its turn list, if any, and
 * its waiters are told whose turn it is. With no turn to give, a single key may go straight to
 * the releasing process's next waiter (the successor), which saves it a round trip.
 * KEYS: the n lock keys, then their n turn lists. ARGV[1]: owner token; ARGV[2]: 'PUBLISH',
 * 'SPUBLISH', or '' to wake nobody and give nothing (giving back a lock nobody used). Optional,
 * left off in the common case: ARGV[3]: the releasing queue's id, put back at the end of the
 * turn list when the key went to another process ('' for none); ARGV[4]: the successor's token
 * ('' for none); ARGV[5]: its ttl in ms.
 * Returns one integer (a table reply costs more than the rest of the script; see `releaseReply`):
 * (outcome + 1) + 4 * succeeded + 8 * turned + 16 * subscribers, where outcome is 1 if every key
 * was ours and is released, 0 if one had expired (and none was stolen), -1 if another owner
 * holds one (left untouched); succeeded is 1 if the successor now holds the key; turned is 1 if
 * a key was given to another process's turn; subscribers counts the connections the
 * notifications reached.
 */
export const RELEASE = lua(`${TURN_HELPERS}
local n = #KEYS / 2
local publish, requeue, successor = ARGV[2], ARGV[3] or '', ARGV[4] or ''
local outcome, subscribers, turned, succeeded = 1, 0, 0, 0
for i = 1, n do
  local holder = redis.call('GET', KEYS[i])
  if holder == ARGV[1] then
    -- A turn or the successor overwrites the key; only a key nobody takes is deleted.
    local turn = publish ~= '' and pass_turn(KEYS[i], KEYS[n + i], requeue) or ''
    if turn ~= '' then
      turned = 1
      if requeue ~= '' then join_line(KEYS[n + i], requeue) end
    elseif successor ~= '' and publish ~= '' then
      redis.call('SET', KEYS[i], successor, 'PX', ARGV[5])
      succeeded = 1
    else
      redis.call('DEL', KEYS[i])
    end
    if publish ~= '' and succeeded == 0 then
      subscribers = subscribers + redis.call(publish, channel_of(KEYS[n + i]), turn)
    end
  elseif holder then
    outcome = -1
  elseif outcome == 1 then
    outcome = 0
  end
end
return (outcome + 1) + 4 * succeeded + 8 * turned + 16 * subscribers
`);

/**
 * Takes a queue that stopped waiting out of the turn list; a turn already given to it goes on
 * to the next in line.
 * KEYS[1]: the lock key; KEYS[2]: its turn list. ARGV[1]: queue id; ARGV[2]: 'PUBLISH' or
 * 'SPUBLISH'.
 * Returns 1 if a turn given to the queue was passed on, else 0.
 */
export const LEAVE_TURNS = lua(`${TURN_HELPERS}
redis.call('LREM', KEYS[2], 0, ARGV[1])
if redis.call('GET', KEYS[1]) ~= 'turn:' .. ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call(ARGV[2], channel_of(KEYS[2]), pass_turn(KEYS[1], KEYS[2], ARGV[1]))
return 1
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
