/**
 * The lease counter: one Redis hash per workspace (`id`, `units`, `left`, `until`) holding the units of its
 * current lease that no run has taken yet. Runs take and hand back units with one script call each; the ledger
 * puts a new lease in (getting the previous one's untaken rest back) and reclaims a lease it is closing. Every
 * step is one script, so a unit is never both taken and reclaimed. Times are Redis's own clock, so that runners
 * and ledgers with skewed clocks agree on when a lease stops giving units.
 */
export const leaseCounterKey = (workspaceId: string) => `ds:billing:lease:${workspaceId}`;

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * Takes one unit: `{ id, left, units }` with the units left after the take, `{ id, -1, units }` when the lease
 * is used up or past its time, nothing when the workspace has no lease counter.
 */
export const TAKE_UNIT_SCRIPT = `
local v = redis.call('HMGET', KEYS[1], 'id', 'left', 'units', 'until')
if not v[1] then return false end
${NOW}
if now >= tonumber(v[4]) or tonumber(v[2]) <= 0 then return {v[1], -1, tonumber(v[3])} end
return {v[1], redis.call('HINCRBY', KEYS[1], 'left', -1), tonumber(v[3])}
`;

/** Hands a unit back to its lease while that lease still gives units (1); otherwise 0, and the ledger must free it. */
export const HAND_BACK_SCRIPT = `
local v = redis.call('HMGET', KEYS[1], 'id', 'until')
if v[1] ~= ARGV[1] then return 0 end
${NOW}
if now >= tonumber(v[2]) then return 0 end
redis.call('HINCRBY', KEYS[1], 'left', 1)
return 1
`;

/**
 * Puts a new lease in (ARGV: id, units, ttl ms, how long the hash outlives its ttl so that the ledger can still
 * reclaim its rest) and answers the lease it replaced: `{ id, left }`, or `{ false, false }` when there was none.
 */
export const PUT_LEASE_SCRIPT = `
local old = redis.call('HMGET', KEYS[1], 'id', 'left')
${NOW}
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'units', ARGV[2], 'left', ARGV[2], 'until', now + tonumber(ARGV[3]))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) + tonumber(ARGV[4]))
return old
`;

/** Ends a lease in the counter and answers its untaken units; -1 when the counter no longer holds that lease. */
export const RECLAIM_LEASE_SCRIPT = `
local v = redis.call('HMGET', KEYS[1], 'id', 'left')
if v[1] ~= ARGV[1] then return -1 end
redis.call('DEL', KEYS[1])
return math.max(tonumber(v[2]), 0)
`;
