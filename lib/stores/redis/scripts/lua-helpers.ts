import { TURN_GRACE, WAITERS_LIFETIME } from '../../../policy/wait-policy.js';
import {
  PROCESS_ID_CHARS,
  TOKEN_CHARS,
  TOKEN_CHECK_CHARS,
  TOKEN_CHECK_SALT,
} from '../../lock-inspection.interface.js';

/**
 * The most entries a turn list holds. Every scan of a list (`LPOS`, `LREM`) is then bounded,
 * and so is each call, a multi-key one too (see MAX_KEYS_PER_LOCK). A queue that finds the list
 * full is not lined up: it still hears every release that wakes the others, and polls.
 */
export const MAX_IN_LINE = 128;

/**
 * A key's turn list holds, in order of arrival, everyone a release must wake: queue ids of
 * processes waiting their turn, and '*' .. queue id for listeners, queues that take no turns
 * (multi-key and Redlock locks) but want the next release. An empty list means nobody else
 * waits, so a release then publishes nothing: PUBLISH is the dearest part of a release.
 * The helpers are Lua closures, made anew on every run of a script that defines them, so the
 * scripts define them after their common path and only those they use.
 * `join_line` puts an entry at the end unless it is already in the list or the list is full
 * (MAX_IN_LINE). It is the only way a script adds to a turn list, and it re-arms the list's
 * expiry each time: a list that a pop emptied (and Redis deleted) comes back with one. Its first
 * PEXPIRE, before the list is written, is refused where the last would be (an ACL without it),
 * so that a refusal leaves no list without an expiry: a script that fails does not undo its
 * writes.
 */
export const JOIN_LINE = `
local function join_line(turns_key, entry)
  redis.call('PEXPIRE', turns_key, ${WAITERS_LIFETIME})
  local room = redis.call('LLEN', turns_key) < ${MAX_IN_LINE}
  if room and not redis.call('LPOS', turns_key, entry) then
    redis.call('RPUSH', turns_key, entry)
  end
  redis.call('PEXPIRE', turns_key, ${WAITERS_LIFETIME})
end
`;

/**
 * `channel_of` names a key's release channel from its list of waiters: both are companion keys
 * of the lock key (see redis-commands.ts), the same up to their names, 'turns' and 'released'.
 */
export const CHANNEL_OF = `
local function channel_of(turns_key)
  return string.sub(turns_key, 1, -6) .. 'released'
end
`;

/**
 * `turns_of` names a lock key's turn list, as `companionKey` does (see redis-commands.ts): a key
 * with a '}' keeps its tag and the name follows a doubled separator; any other becomes the tag.
 * Either way the list shares the key's Cluster slot, so a script sent the key alone may read it.
 */
export const TURNS_OF = `
local function turns_of(lock_key)
  if string.find(lock_key, '}', 1, true) then return lock_key .. '\\31\\31turns' end
  return '{' .. lock_key .. '}\\31turns'
end
`;

/** The most entries of a turn list one release takes out before it gives up looking. */
export const LINE_LOOKAHEAD = 64;

/**
 * The most turn-list entries one release call looks at over all its keys: a release of n keys
 * looks at most this / n entries of each list (and at most LINE_LOOKAHEAD).
 */
export const CALL_LOOKAHEAD = 512;

/**
 * `pass_turn` gives the released key to the first process in line, taking out of the list
 * every entry before it: the releasing queue (`own`: it just had its turn) and listeners ('*'
 * is byte 42). Listeners are woken by the release's notification whoever gets the key, and one
 * still waiting comes back at the end of the list when its next attempt fails; a listener whose
 * process died is thus dropped, and never holds up the processes behind it. The process in line
 * gets the key in its turn: the key holds 'turn:' .. id for TURN_GRACE ms, a reservation that
 * only that queue's acquire may replace. Returns that id; '' when only listeners were in the
 * way (wake them all, give no turn); or false when nobody else waits. At most `lookahead`
 * entries are looked at: past that many listeners the release wakes everyone, the process in
 * line included. `lookahead_of(n)` is that many for each key of a release of n keys (see
 * LINE_LOOKAHEAD and CALL_LOOKAHEAD).
 * It also defines `channel_of` (see CHANNEL_OF).
 */
export const PASS_TURN = `
local function lookahead_of(n)
  return math.max(1, math.min(${LINE_LOOKAHEAD}, math.floor(${CALL_LOOKAHEAD} / n)))
end
local function pass_turn(lock_key, turns_key, own, lookahead)
  local line = {redis.call('LPOP', turns_key)}
  if not line[1] then return false end
  -- Past a listener (or the releaser) at the head, the rest is read at once and trimmed once.
  if lookahead > 1 and (string.byte(line[1]) == 42 or line[1] == own) then
    for _, entry in ipairs(redis.call('LRANGE', turns_key, 0, lookahead - 2)) do
      line[#line + 1] = entry
    end
  end
  local woken = false
  for i, entry in ipairs(line) do
    if string.byte(entry) == 42 then
      woken = true
    elseif entry ~= own then
      if i > 1 then redis.call('LTRIM', turns_key, i - 1, -1) end
      redis.call('SET', lock_key, 'turn:' .. entry, 'PX', ${TURN_GRACE})
      return entry
    end
  end
  if #line > 1 then redis.call('LTRIM', turns_key, #line - 1, -1) end
  if woken then return '' end
  return false
end
${CHANNEL_OF}`;

/**
 * `worse` folds a key that is not the releaser's into a release's outcome (1 all released):
 * held by another owner (-1) outweighs expired (0).
 */
export const WORSE = `
local function worse(outcome, holder)
  if holder then return -1 end
  return math.min(outcome, 0)
end
`;

/**
 * How long a fence counter outlives the lease it was issued for, in ms. Fences do not depend on
 * the counter surviving (see `NEXT_FENCE`), so counters of keys no longer used can go.
 */
export const FENCE_GRACE = 5_000;

/**
 * `next_fence` issues a key's next fence: one more than the last, and never less than the
 * server's clock in microseconds. The clock floor keeps fences increasing when the counter is
 * gone (expired, a restart without persistence, a failover to a replica that lacked it), as
 * long as the clock of whichever server issues them does not step back past the last fence; a
 * key is never locked more than once a microsecond, so fences do not run ahead of the clock.
 * The clock is read once per script run: a multi-key lock fences each key once.
 * The counter expires FENCE_GRACE ms after the lease, so unused keys leave nothing behind.
 */
export const NEXT_FENCE = `
local fence_clock
local function next_fence(counter_key, ttl)
  if not fence_clock then
    local now = redis.call('TIME')
    fence_clock = now[1] * 1000000 + now[2]
  end
  local last = tonumber(redis.call('GET', counter_key) or '0')
  local fence = math.max(last + 1, fence_clock)
  redis.call('SET', counter_key, string.format('%.0f', fence), 'PX', ttl + ${FENCE_GRACE})
  return fence
end
`;

/**
 * Ends a mutex key's value once another process has lined up for the key: the key then holds
 * its holder's token and this mark. A release that finds the value without it knows nobody else
 * waits, and reads no other key (RELEASE_UNWATCHED). Tokens, queue ids and reservations are
 * base64url after a 'turn:' at most, so none ends with it. Whatever overwrites a marked value
 * while the line is not empty marks the new one; a mark that outlives its line costs the release
 * one more round trip, nothing else. Only the library's own values are marked, as their token
 * check tells (`library_value`, see TOKEN_CHECK_CHARS): another client's compare-and-delete
 * must find its token as it wrote it, whatever its length or alphabet.
 */
export const WAITERS_MARK = '!';

/**
 * `value_of` reads a mutex key's value: false when the key is free, '' when it holds another type
 * (a semaphore's or read-write lock's holder set; see holder-set.scripts.ts). Any other error,
 * such as a GET the ACL user may not run, is raised again by a line that names GET, so that the
 * refusal names the grant it needs rather than reading as another owner.
 * `score_of` is the same for a holder-set member's lease end, false when it is not in the set, and
 * '' when the key holds a mutex.
 */
export const VALUE_OF = `
local function value_of(key)
  local value = redis.pcall('GET', key)
  if type(value) ~= 'table' then return value end
  if string.sub(value.err, 1, 9) == 'WRONGTYPE' then return '' end
  return redis.call('GET', key)
end
`;
export const SCORE_OF = `
local function score_of(key, member)
  local score = redis.pcall('ZSCORE', key, member)
  if type(score) ~= 'table' then return score end
  if string.sub(score.err, 1, 9) == 'WRONGTYPE' then return '' end
  return redis.call('ZSCORE', key, member)
end
`;

/**
 * `holder_of` reads a mutex key's holder, whatever the key holds, and whether the value carries
 * the waiters' mark: a key of a semaphore or read-write lock reads as '', held by someone else
 * (see VALUE_OF). A value is marked only when what precedes the mark is the library's own.
 * `library_value` says whether a value is one this library wrote: a token or a reservation
 * ('turn:' .. queue id) whose last TOKEN_CHECK_CHARS characters are the check of its process id.
 * `mark_waiters` marks a held mutex key, as read by `holder_of`, keeping its expiry, if the value
 * is the library's: another client's value is never changed.
 * `held_as` says how a sorted-set key is held: 'L' .. limit for a semaphore (its limit entry
 * ranks last), 'RW' for a read-write lock.
 */
export const HOLDER_OF = `${VALUE_OF}
local function library_value(value)
  if string.sub(value, 1, 5) == 'turn:' then value = string.sub(value, 6) end
  if #value ~= ${TOKEN_CHARS} then return false end
  local check = redis.sha1hex('${TOKEN_CHECK_SALT}' .. string.sub(value, 1, ${PROCESS_ID_CHARS}))
  return string.sub(value, -${TOKEN_CHECK_CHARS}) == string.sub(check, 1, ${TOKEN_CHECK_CHARS})
end
local function holder_of(key)
  local holder = value_of(key)
  if not holder or string.byte(holder, -1) ~= ${WAITERS_MARK.charCodeAt(0)} then return holder, false end
  local unmarked = string.sub(holder, 1, -2)
  if library_value(unmarked) then return unmarked, true end
  return holder, false
end
local function mark_waiters(key, holder, marked)
  if marked or not library_value(holder) then return end
  redis.call('SET', key, holder .. '${WAITERS_MARK}', 'XX', 'KEEPTTL')
end
local function held_as(key)
  local last = redis.call('ZRANGE', key, -1, -1)[1]
  if last and string.byte(last) == 76 then return last end
  return 'RW'
end
`;

/**
 * `with_mark` is the value for a key taken as `token`: marked when others are still in its turn
 * list, since whatever takes a key with the line not empty keeps the waiters' mark on it.
 */
export const WITH_MARK = `
local function with_mark(turns_key, token)
  if redis.call('LLEN', turns_key) > 0 then return token .. '${WAITERS_MARK}' end
  return token
end
`;
