/**
 * The whole purchase as one Lua script: Redis runs it atomically, so it needs no lock.
 * KEYS: stock, orders, buyers. ARGV: order id, user id.
 * Returns 1 sold, 0 sold out, -1 already ordered, -2 unknown product.
 */
export const ATOMIC_BUY = `
local stock = redis.call('GET', KEYS[1])
if not stock then return -2 end
if redis.call('SISMEMBER', KEYS[3], ARGV[2]) == 1 then return -1 end
if tonumber(stock) <= 0 then return 0 end
redis.call('DECR', KEYS[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[3], ARGV[2])
return 1
`;
