import { EXTEND_MEMBER } from './holder-set.scripts.js';
import {
  HOLDER_OF,
  JOIN_LINE,
  PASS_TURN,
  TURNS_OF,
  VALUE_OF,
  WAITERS_MARK,
  WORSE,
} from './lua-helpers.js';
import { lua, publishing } from './lua-script.js';

/**
 * The release of keys others may wait for: those of a lock of several keys, or a key with a
 * waiter in the releasing process (the rest go by RELEASE_UNWATCHED).
 * Compare-and-delete; each released key whose value carries the waiters' mark goes to the next
 * process in its turn list, if any, and the listeners ahead of it are woken (see PASS_TURN).
 * With nobody else in the list, a single key may go straight to the releasing process's next
 * waiter (the successor), which saves it a round trip. With listeners but no process in line,
 * the key is freed for all to try: a successor would keep it in this process for as long as it
 * has waiters.
 * KEYS: the n lock keys, then their n turn lists. ARGV[1]: owner token. Optional, left off
 * when nobody waits here: ARGV[2]: the releasing queue's id, put back at the end of the turn
 * list when the key went to another process ('' for none); ARGV[3]: the successor's token ('' for
 * none); ARGV[4]: its ttl in ms.
 * Returns one integer (a table reply costs more than the rest of the script; see
 * `releaseReport`):
 * (outcome + 1) + 4 * succeeded + 8 * turned + 16 * subscribers, where outcome is 1 if every key
 * was ours and is released, 0 if one had expired (and none was stolen), -1 if another owner
 * holds one (left untouched); succeeded is 1 if the successor now holds the key; turned is 1 if
 * a key was given to another process's turn; subscribers counts the connections the
 * notifications reached.
 */
export const RELEASE = publishing(
  (publish) => `
${HOLDER_OF}
${JOIN_LINE}
${PASS_TURN}
${WORSE}
local n = #KEYS / 2
local requeue, successor = ARGV[2] or '', ARGV[3] or ''
local outcome, subscribers, turned, succeeded = 1, 0, 0, 0
local lookahead = lookahead_of(n)
for i = 1, n do
  -- A key now of a semaphore or read-write lock reads as another owner's ('').
  local holder, marked = holder_of(KEYS[i])
  if holder == ARGV[1] then
    -- A turn or the successor overwrites the key; only a key nobody takes is deleted. A value
    -- without the waiters' mark says nobody else is in line: its list is not read.
    local turn = marked and pass_turn(KEYS[i], KEYS[n + i], requeue, lookahead)
    if turn and turn ~= '' then
      turned = 1
      if requeue ~= '' then join_line(KEYS[n + i], requeue) end
    elseif successor ~= '' and not turn then
      redis.call('SET', KEYS[i], successor, 'PX', ARGV[4])
      succeeded = 1
    else
      redis.call('DEL', KEYS[i])
    end
    if turn then
      subscribers = subscribers + redis.call('${publish}', channel_of(KEYS[n + i]), turn)
    end
  elseif successor ~= '' and holder == successor then
    -- This release was applied before and sent again (a resend after a reconnect).
    succeeded = 1
  else
    outcome = worse(outcome, holder)
  end
end
return (outcome + 1) + 4 * succeeded + 8 * turned + 16 * subscribers
`,
);

/**
 * The common release: compare-and-delete of one mutex key nobody waits for in the releasing
 * process. A value without the waiters' mark (see WAITERS_MARK) says nobody else waits either,
 * and the script reads no other key. A marked one says another process is in the turn list:
 * the script then hands the key on as RELEASE does, in the same call. The turn list's name is
 * derived from the key (see TURNS_OF), so the common release sends the key alone.
 * KEYS[1]: the lock key. ARGV[1]: owner token.
 * Returns as RELEASE does: outcome + 1 for an unmarked key, and for a marked one
 * 2 + 8 * turned + 16 * subscribers.
 */
export const RELEASE_UNWATCHED = publishing(
  (publish) => `
local holder = redis.pcall('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 2
end
if holder == ARGV[1] .. '${WAITERS_MARK}' then
  ${TURNS_OF}
  ${PASS_TURN}
  local turns_key = turns_of(KEYS[1])
  local turn = pass_turn(KEYS[1], turns_key, '', lookahead_of(1))
  if not turn or turn == '' then redis.call('DEL', KEYS[1]) end
  if not turn then return 2 end
  local subscribers = redis.call('${publish}', channel_of(turns_key), turn)
  return 2 + (turn ~= '' and 8 or 0) + 16 * subscribers
end
-- A holder set reads as another owner's; any other error is raised as the refusal it is.
if type(holder) == 'table' and string.sub(holder.err, 1, 9) ~= 'WRONGTYPE' then
  holder = redis.call('GET', KEYS[1])
end
if holder then return 0 end
return 1
`,
);

/**
 * Compare-and-delete that wakes nobody and gives no turn: giving back a lock nobody used.
 * KEYS: the n lock keys. ARGV[1]: owner token.
 * Returns outcome + 1, outcome as in RELEASE.
 */
export const GIVE_BACK = lua(`${WORSE}
${HOLDER_OF}
local outcome = 1
for i = 1, #KEYS do
  local holder = holder_of(KEYS[i])
  if holder == ARGV[1] then
    redis.call('DEL', KEYS[i])
  else
    outcome = worse(outcome, holder)
  end
end
return outcome + 1
`);

/**
 * Takes a queue that stopped waiting out of the key's lists: the turn list, as a process in
 * line or as a listener (a turn already given to it goes on to the next in line), and the mark
 * of a waiting writer, if it is the queue's. A list it leaves empty unmarks the key.
 * KEYS[1]: the lock key; KEYS[2]: its turn list; KEYS[3]: its waiting writer's mark.
 * ARGV[1]: queue id.
 * Returns 1 if a turn given to the queue was passed on, else 0.
 */
export const LEAVE = publishing(
  (publish) => `
redis.call('LREM', KEYS[2], 0, ARGV[1])
redis.call('LREM', KEYS[2], 0, '*' .. ARGV[1])
local writer = redis.call('GET', KEYS[3])
if writer == ARGV[1] then redis.call('DEL', KEYS[3]) end
${HOLDER_OF}
local holder, marked = holder_of(KEYS[1])
if holder ~= 'turn:' .. ARGV[1] then
  -- The last to leave takes the waiters' mark with it.
  if marked and redis.call('LLEN', KEYS[2]) == 0 then
    redis.call('SET', KEYS[1], holder, 'XX', 'KEEPTTL')
  end
  return 0
end
${PASS_TURN}
redis.call('DEL', KEYS[1])
local turn = pass_turn(KEYS[1], KEYS[2], ARGV[1], lookahead_of(1))
if turn then redis.call('${publish}', channel_of(KEYS[2]), turn) end
return 1
`,
);

/**
 * Compare-and-PEXPIRE for many leases in one call, of mutexes and of holder sets (see
 * holder-set.scripts.ts) alike.
 * KEYS: one lock key per lease key. ARGV[i]: the token for KEYS[i], or its member in a holder
 * set; then the ttls in ms: ARGV[n+i] for KEYS[i], or, when every key gets the same one (the
 * common case, sent once), ARGV[n+1] for all; then, only when some key is a holder set, one
 * flag per key, '1' if KEYS[i] is one. The argument count tells the forms apart: n+1 or 2n+1
 * with one ttl, 2n or 3n with a ttl per key (for n = 1 they coincide and mean the same).
 * Returns one code per key: 1 extended, 0 expired (key or member gone), -1 held by another owner.
 */
export const EXTEND = lua(`${EXTEND_MEMBER}
${VALUE_OF}
local n = #KEYS
local per_key = n > 1 and (#ARGV == 2 * n or #ARGV == 3 * n)
local flags = per_key and 2 * n or n + 1
local sets = #ARGV > flags
local result = {}
for i = 1, n do
  local ttl = per_key and ARGV[n + i] or ARGV[n + 1]
  local holder = sets and ARGV[flags + i] == '1' and extend_member(KEYS[i], ARGV[i], ttl)
    or value_of(KEYS[i])
  if type(holder) == 'number' then
    result[i] = holder
  elseif holder == ARGV[i] or holder == ARGV[i] .. '${WAITERS_MARK}' then
    redis.call('PEXPIRE', KEYS[i], ttl)
    result[i] = 1
  elseif holder then
    result[i] = -1
  else
    result[i] = 0
  end
end
return result
`);
