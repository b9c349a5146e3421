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

/** The command that wakes a key's waiters: sharded Pub/Sub on Redis Cluster, plain elsewhere. */
export type PublishCommand = 'PUBLISH' | 'SPUBLISH';

/** A script whose text names the publish command, so the caller need not send it each time. */
export type PublishingScript = Readonly<Record<PublishCommand, LuaScript>>;

function publishing(body: (publish: PublishCommand) => string): PublishingScript {
  return { PUBLISH: lua(body('PUBLISH')), SPUBLISH: lua(body('SPUBLISH')) };
}

/**
 * How long a key given to a process in its turn stays reserved for it, in ms. A process that
 * died, or stopped waiting, holds up the others no longer than this.
 */
export const TURN_GRACE = 500;
/** How long a key's turn list outlives its last arrival, in ms (a live waiter re-arrives sooner). */
export const TURNS_LIFETIME = 60_000;

/**
 * A key's turn list holds, in order of arrival, everyone a release must wake: queue ids of
 * processes waiting their turn, and '*' .. queue id for listeners, queues that take no turns
 * (multi-key and Redlock locks) but want the next release. An empty list means nobody else
 * waits, so a release then publishes nothing: PUBLISH is the dearest part of a release.
 * The helpers are Lua closures, made anew on every run of a script that defines them, so the
 * scripts define them after their common path and only those they use.
 * `join_line` puts an entry at the end unless it is already in the list.
 */
const JOIN_LINE = `
local function join_line(turns_key, entry)
  if not redis.call('LPOS', turns_key, entry) then redis.call('RPUSH', turns_key, entry) end
  redis.call('PEXPIRE', turns_key, ${TURNS_LIFETIME})
end
`;

/**
 * `pass_turn` pops the next entry, skipping the releasing queue (`own`: it just had its turn).
 * A queue id gets the released key in its turn: the key holds 'turn:' .. id for TURN_GRACE ms, a
 * reservation that only that queue's acquire may replace. Returns that id; or '' and the entry
 * for a listener ('*' is byte 42): wake them all, give no turn; or false when nobody else waits.
 * `channel_of` names a key's release channel from its turn list: both are companion keys of
 * the lock key (see key-slots.ts), '<base>:turns' and '<base>:released'.
 */
const PASS_TURN = `
local function pass_turn(lock_key, turns_key, own)
  local entry = redis.call('LPOP', turns_key)
  if entry == own then entry = redis.call('LPOP', turns_key) end
  if not entry then return false end
  if string.byte(entry) == 42 then return '', entry end
  redis.call('SET', lock_key, 'turn:' .. entry, 'PX', ${TURN_GRACE})
  return entry
end
local function channel_of(turns_key)
  return string.sub(turns_key, 1, -7) .. ':released'
end
`;

/**
 * `worse` folds a key that is not the releaser's into a release's outcome (1 all released):
 * held by another owner (-1) outweighs expired (0).
 */
const WORSE = `
local function worse(outcome, holder)
  if holder then return -1 end
  return math.min(outcome, 0)
end
`;

/**
 * Takes all lock keys, or none.
 * KEYS: the n lock keys, then (when fencing) their n fence counters, then (when listening) their
 * n turn lists.
 * ARGV[1]: owner token; ARGV[2]: ttl in ms; ARGV[3]: '1' to fence, '0' not to; ARGV[4]
 * (optional): the id of a listening queue, entered as a listener in the turn list of every busy
 * key, and taken out of all of them when the keys are taken.
 * Returns {1, fence_1, ..., fence_n} (fences only when fencing) when taken, or
 * {0, pttl}: the longest remaining lease among the held keys (-1 if one has no expiry).
 */
export const ACQUIRE = lua(`
local fencing, listener = ARGV[3] == '1', ARGV[4] and '*' .. ARGV[4]
local groups = 1 + (fencing and 1 or 0) + (listener and 1 or 0)
local n = #KEYS / groups
local lines = (groups - 1) * n
-- A single key is taken by SET NX, with no look first.
if n == 1 and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if listener then redis.call('LREM', KEYS[lines + 1], 0, listener) end
  if fencing then return {1, redis.call('INCR', KEYS[2])} end
  return {1}
end
${JOIN_LINE}
local longest = -2
for i = 1, n do
  local pttl = redis.call('PTTL', KEYS[i])
  if pttl ~= -2 then
    if listener then join_line(KEYS[lines + i], listener) end
    if longest ~= -1 and (pttl == -1 or pttl > longest) then longest = pttl end
  end
end
if longest ~= -2 then return {0, longest} end
local result = {1}
for i = 1, n do
  redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
  if fencing then result[i + 1] = redis.call('INCR', KEYS[n + i]) end
  if listener then redis.call('LREM', KEYS[lines + i], 0, listener) end
end
return result
`);

/**
 * Takes a single key for the head of a process's wait queue, or else puts that queue in the
 * key's turn list, so processes get a busy key in the order they came.
 * KEYS[1]: the lock key; KEYS[2]: its turn list; KEYS[3]: its fence counter (when fencing).
 * ARGV[1]: owner token; ARGV[2]: ttl in ms; ARGV[3]: queue id; ARGV[4]: '1' to fence, '0' not
 * to.
 * Returns {1} or {1, fence} when taken (the key was free or reserved for this queue), or
 * {0, pttl} when busy.
 */
export const ACQUIRE_IN_TURN = lua(`
local holder = redis.call('GET', KEYS[1])
if not holder or holder == 'turn:' .. ARGV[3] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  redis.call('LREM', KEYS[2], 0, ARGV[3])
  if ARGV[4] == '1' then return {1, redis.call('INCR', KEYS[3])} end
  return {1}
end
${JOIN_LINE}
join_line(KEYS[2], ARGV[3])
return {0, redis.call('PTTL', KEYS[1])}
`);

/**
 * Compare-and-delete; each released key goes to the next process in its turn list, if any, and
 * whoever is in the list is woken. With no turn to give, a single key may go straight to the
 * releasing process's next waiter (the successor), which saves it a round trip; listeners then
 * stay in the list for the successor's release.
 * KEYS: the n lock keys, then their n turn lists. ARGV[1]: owner token. Optional, left off in
 * the common case: ARGV[2]: the releasing queue's id, put back at the end of the turn list when
 * the key went to another process ('' for none); ARGV[3]: the successor's token ('' for none);
 * ARGV[4]: its ttl in ms.
 * Returns one integer (a table reply costs more than the rest of the script; see `releaseReport`):
 * (outcome + 1) + 4 * succeeded + 8 * turned + 16 * subscribers, where outcome is 1 if every key
 * was ours and is released, 0 if one had expired (and none was stolen), -1 if another owner
 * holds one (left untouched); succeeded is 1 if the successor now holds the key; turned is 1 if
 * a key was given to another process's turn; subscribers counts the connections the
 * notifications reached.
 */
export const RELEASE = publishing(
  (publish) => `
local n = #KEYS / 2
local first = redis.call('GET', KEYS[1])
-- The common release, ahead of the helpers: one key, ours, nothing to hand on, nobody waiting.
if n == 1 and not ARGV[2] and first == ARGV[1] and redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('DEL', KEYS[1])
  return 2
end
${JOIN_LINE}
${PASS_TURN}
${WORSE}
local requeue, successor = ARGV[2] or '', ARGV[3] or ''
local outcome, subscribers, turned, succeeded = 1, 0, 0, 0
for i = 1, n do
  local holder = first
  if i > 1 then holder = redis.call('GET', KEYS[i]) end
  if holder == ARGV[1] then
    -- A turn or the successor overwrites the key; only a key nobody takes is deleted.
    local turn, listener = pass_turn(KEYS[i], KEYS[n + i], requeue)
    if turn and turn ~= '' then
      turned = 1
      if requeue ~= '' then join_line(KEYS[n + i], requeue) end
    elseif successor ~= '' then
      if listener then redis.call('LPUSH', KEYS[n + i], listener) end
      turn = false
      redis.call('SET', KEYS[i], successor, 'PX', ARGV[4])
      succeeded = 1
    else
      redis.call('DEL', KEYS[i])
    end
    if turn then
      subscribers = subscribers + redis.call('${publish}', channel_of(KEYS[n + i]), turn)
    end
  else
    outcome = worse(outcome, holder)
  end
end
return (outcome + 1) + 4 * succeeded + 8 * turned + 16 * subscribers
`,
);

/**
 * Compare-and-delete that wakes nobody and gives no turn: giving back a lock nobody used.
 * KEYS: the n lock keys. ARGV[1]: owner token.
 * Returns outcome + 1, outcome as in RELEASE.
 */
export const GIVE_BACK = lua(`${WORSE}
local outcome = 1
for i = 1, #KEYS do
  local holder = redis.call('GET', KEYS[i])
  if holder == ARGV[1] then
    redis.call('DEL', KEYS[i])
  else
    outcome = worse(outcome, holder)
  end
end
return outcome + 1
`);

/**
 * Takes a queue that stopped waiting out of the turn list, as a process in line or as a
 * listener; a turn already given to it goes on to the next in line.
 * KEYS[1]: the lock key; KEYS[2]: its turn list. ARGV[1]: queue id.
 * Returns 1 if a turn given to the queue was passed on, else 0.
 */
export const LEAVE_TURNS = publishing(
  (publish) => `
redis.call('LREM', KEYS[2], 0, ARGV[1])
redis.call('LREM', KEYS[2], 0, '*' .. ARGV[1])
if redis.call('GET', KEYS[1]) ~= 'turn:' .. ARGV[1] then return 0 end
${PASS_TURN}
redis.call('DEL', KEYS[1])
local turn = pass_turn(KEYS[1], KEYS[2], ARGV[1])
if turn then redis.call('${publish}', channel_of(KEYS[2]), turn) end
return 1
`,
);

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
