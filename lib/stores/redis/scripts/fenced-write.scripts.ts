import { lua } from './lua-script.js';

/** Most write ids a resource remembers for the current fence; older ones are forgotten then. */
export const REMEMBERED_WRITES = 1_000;
/** How long a resource remembers write ids after its last fenced write, in ms. */
export const WRITE_MEMORY = 600_000;

/**
 * Applies writes only for a writer whose fence is at least the newest fence already applied to
 * the resource, and records its fence. A holder that paused past its lease (so a newer holder
 * has written since) is turned away. Each write carries an id: the same id sent again under the
 * same fence (a resent command, or the caller's retry) applies nothing and returns the first
 * result, kept as JSON in a hash of the fence's write ids. A newer fence clears that hash, and
 * so does a full one (REMEMBERED_WRITES); UNLINK frees it away from Redis's main thread.
 * KEYS[1]: the resource's fence key; KEYS[2]: its write ids; KEYS[2 + i]: the key of write i.
 * ARGV[1]: the writer's fence; ARGV[2]: the write id; then, per write: command name, argument
 * count, arguments.
 * Returns {1, {reply_1, ...}} when applied, {2, json} when already applied (json: the replies
 * then, with nil as false and status replies as {ok = ...}), or {0, newest_fence} when stale.
 */
export const FENCED_WRITE = lua(`
local newest = tonumber(redis.call('GET', KEYS[1]) or '0')
local fence = tonumber(ARGV[1])
if fence < newest then return {0, redis.call('GET', KEYS[1])} end
-- Refused, this fails before anything is written: no write ids are left without an expiry.
redis.call('PEXPIRE', KEYS[2], ${WRITE_MEMORY})
if fence > newest then
  redis.call('SET', KEYS[1], ARGV[1])
  redis.call('UNLINK', KEYS[2])
else
  local done = redis.call('HGET', KEYS[2], ARGV[2])
  if done then return {2, done} end
end
local replies = {}
local at = 3
for i = 3, #KEYS do
  local argc = tonumber(ARGV[at + 1])
  replies[i - 2] = redis.call(ARGV[at], KEYS[i], unpack(ARGV, at + 2, at + 1 + argc))
  at = at + 2 + argc
end
local remembered = redis.call('HLEN', KEYS[2])
if remembered >= ${REMEMBERED_WRITES} then redis.call('UNLINK', KEYS[2]) end
redis.call('HSET', KEYS[2], ARGV[2], cjson.encode(replies))
redis.call('PEXPIRE', KEYS[2], ${WRITE_MEMORY})
return {1, replies}
`);
