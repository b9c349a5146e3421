/**
 * Generators of the moves of others and of the scenes that reach the states that matter: keys
 * crowded past their limit, hand-offs near the end of a lease, stale holders acting after
 * their lease, hundreds of leases due at once. Like model-commands.ts, nothing here knows a
 * particular defect: each scene is a shape of use, with its sizes and timings drawn.
 */
import fc from 'fast-check';
import type { Capability } from './model-backend.js';
import type { Api, BulkOp, BurstOp, Op, StaleOp, TakeOp, TakeOptions } from './model-ops.js';
import type { WorldOp } from './world-ops.js';

/** Where the keys come from: the target's groups (a Cluster keeps a group in one slot). */
export interface KeySource {
  readonly key: fc.Arbitrary<string>;
  /** The commands a revoke may take away (none where there is no ACL). */
  readonly revocable: readonly string[];
}

const svcArb = fc.integer({ min: 0, max: 3 });
const HEX = '0123456789abcdef';
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const ALNUM = BASE64URL.slice(0, 62);

const tokenOf = (alphabet: string, min: number, max: number): fc.Arbitrary<string> =>
  fc
    .array(fc.constantFrom(...alphabet), { minLength: min, maxLength: max })
    .map((chars) => chars.join(''));

/**
 * A foreign client's token: as often as not the library's own length (30) in an alphabet the
 * library's tokens share, where telling values apart by shape fails; else any length, any text.
 */
const foreignToken = fc.oneof(
  { weight: 3, arbitrary: tokenOf(HEX, 30, 30) },
  { weight: 3, arbitrary: tokenOf(BASE64URL, 30, 30) },
  { weight: 1, arbitrary: tokenOf(ALNUM, 1, 64) },
  { weight: 1, arbitrary: tokenOf(HEX, 8, 40) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 48, unit: 'grapheme' }) },
);

function foreignArb(key: fc.Arbitrary<string>): fc.Arbitrary<WorldOp> {
  return fc
    .record({
      key,
      token: foreignToken,
      ttl: fc.integer({ min: 100, max: 3_000 }),
      wait: fc.integer({ min: 0, max: 3_000 }),
      // Mostly a tight spin (0: at once), as a `SET NX` retry loop does: it lands just as a
      // lease ends.
      spinMs: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 0, max: 3 }) }, fc.integer({ min: 4, max: 50 })), // prettier-ignore
      holdMs: fc.integer({ min: 0, max: 2_000 }),
      extendTo: fc.option(fc.integer({ min: 50, max: 3_000 }), { freq: 2, nil: undefined }),
    })
    .map(({ extendTo, ...rest }) => ({
      type: 'foreign' as const,
      ...rest,
      ...(extendTo !== undefined && { extendTo }),
    }));
}

/** A stall some shorter than the lease margin (≤ 25 ms), some far longer than any lease's. */
const stallMs = fc.oneof(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 100, max: 1_500 }));

/** A key crowded past its limit: more takers of one kind than it admits, across services. */
function crowdArb(key: fc.Arbitrary<string>): fc.Arbitrary<BurstOp> {
  const kind = fc.oneof(
    { weight: 2, arbitrary: fc.constant<TakeOptions>({}) },
    { weight: 2, arbitrary: fc.integer({ min: 1, max: 3 }).map((limit): TakeOptions => ({ limit })) }, // prettier-ignore
    { weight: 1, arbitrary: fc.constant<TakeOptions>({ mode: 'write' }) },
  );
  return fc.tuple(key, kind, fc.integer({ min: 1, max: 3 })).chain(([k, shape, extra]) => {
    const takers = (shape.limit ?? 2) + extra;
    const mode = shape.mode
      ? fc.constantFrom<TakeOptions>({ mode: 'read' }, { mode: 'write' })
      : fc.constant(shape);
    const take = fc.record({
      svc: svcArb,
      api: fc.constantFrom<Api>('acquire', 'withLock', 'decorator', 'tryAcquire'),
      kind: mode,
      ttl: fc.option(fc.integer({ min: 100, max: 2_000 }), { nil: undefined }),
      wait: fc.integer({ min: 300, max: 3_000 }),
      holdMs: fc.integer({ min: 50, max: 800 }),
    });
    return fc.array(take, { minLength: takers, maxLength: takers }).map((takes): BurstOp => ({
      type: 'burst',
      takes: takes.map(({ svc, api, kind: k2, ttl, wait, holdMs }): TakeOp => ({
        type: 'take',
        svc,
        api,
        keys: [k],
        opts: { ...k2, wait, ...(ttl !== undefined && { ttl }) },
        holdMs,
      })),
    }));
  });
}

/**
 * Waiters of one service lined up behind a holder of the same service whose lease is nearly
 * out when it lets go (no renewal, released `left` ms before its end): a local hand-off near
 * the end of a lease. The waiters' leases are drawn around what is left, on both sides of the
 * rule that a hand-off passes more than half of the recipient's lease.
 */
function handOffNearEndArb(key: fc.Arbitrary<string>): fc.Arbitrary<BurstOp> {
  return fc
    .record({
      svc: svcArb,
      key,
      ttl: fc.integer({ min: 200, max: 2_000 }),
      leftShare: fc.double({ min: 0.02, max: 0.5, noNaN: true }),
      waiters: fc.array(
        fc.record({
          factor: fc.double({ min: 1, max: 4, noNaN: true }),
          api: fc.constantFrom<Api>('withLock', 'decorator', 'acquire'),
          holdMs: fc.integer({ min: 20, max: 300 }),
          maxHold: fc.option(fc.integer({ min: 100, max: 3_000 }), { freq: 4, nil: undefined }),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      holder: fc.constantFrom<Api>('acquire', 'withLock'),
    })
    .map(({ svc, key: k, ttl, leftShare, waiters, holder }): BurstOp => {
      const left = Math.max(5, Math.round(ttl * leftShare));
      const first: TakeOp = { type: 'take', svc, api: holder, keys: [k], opts: { ttl, autoRenew: false, wait: 2_000 }, holdMs: ttl - left }; // prettier-ignore
      const queued = waiters.map(({ factor, api, holdMs, maxHold }): TakeOp => ({
        type: 'take',
        svc,
        api,
        keys: [k],
        opts: { ttl: Math.max(100, Math.round(left * factor)), wait: 3_000, ...(maxHold !== undefined && { maxHold }) }, // prettier-ignore
        holdMs,
      }));
      return { type: 'burst', takes: [first, ...queued] };
    });
}

/**
 * A lease that runs out under its holder while others wait for the key: code that takes longer
 * than its lease, without renewal (the classic misuse), with a foreign `SET NX` loop or waiters
 * of other services after the key. Whoever gets it next must find the old holder told to stop.
 */
function overstayArb(key: fc.Arbitrary<string>, foreigners: boolean): fc.Arbitrary<BurstOp> {
  return fc
    .record({
      svc: svcArb,
      key,
      api: fc.constantFrom<Api>('acquire', 'withLock', 'decorator'),
      ttl: fc.integer({ min: 100, max: 1_500 }),
      over: fc.integer({ min: 20, max: 1_000 }),
      deaf: fc.boolean(),
      token: foreignToken,
      spinMs: fc.integer({ min: 0, max: 2 }),
      waiters: fc.array(fc.record({ svc: svcArb, wait: fc.integer({ min: 300, max: 3_000 }) }), {
        maxLength: 2,
      }),
      foreign: foreigners ? fc.boolean() : fc.constant(false),
    })
    .map(({ svc, key: k, api, ttl, over, deaf, token, spinMs, waiters, foreign }): BurstOp => {
      const holder: TakeOp = { type: 'take', svc, api, keys: [k], opts: { ttl, autoRenew: false, wait: 2_000 }, holdMs: ttl + over, ...(deaf && { deaf }) }; // prettier-ignore
      const others = waiters.map(({ svc: other, wait }): TakeOp => ({ type: 'take', svc: other, api: 'withLock', keys: [k], opts: { wait, ttl: 500 }, holdMs: 50 })); // prettier-ignore
      const spinner = { type: 'foreign' as const, key: k, token, ttl: 300, wait: ttl + over + 500, spinMs, holdMs: 50 }; // prettier-ignore
      return { type: 'burst', takes: [holder, ...others], ...(foreign && { foreign: [spinner] }) };
    });
}

const staleArb: fc.Arbitrary<StaleOp> = fc.record({
  type: fc.constant('stale' as const),
  svc: svcArb,
  slot: fc.integer({ min: 0, max: 3 }),
  stallMs: fc.integer({ min: 50, max: 2_000 }),
  act: fc.constantFrom('release' as const, 'extend' as const, 'extendShort' as const),
});

const bulkArb: fc.Arbitrary<BulkOp> = fc.record({
  type: fc.constant('bulk' as const),
  svc: svcArb,
  count: fc.integer({ min: 150, max: 600 }),
  ttl: fc.integer({ min: 300, max: 1_500 }),
  holdMs: fc.integer({ min: 500, max: 3_000 }),
});

/** The commands the library uses most, revoked more often: more calls meet the revoke. */
const COMMON = new Set(['get', 'set', 'pexpire', 'pttl', 'evalsha', 'eval', 'lpos', 'llen', 'publish', 'time', 'del', 'zadd']); // prettier-ignore

/** The moves of others, and the scenes, weighted for the target's capabilities. */
export function worldMovesArb(
  source: KeySource,
  can: readonly Capability[],
): { weight: number; arbitrary: fc.Arbitrary<Op> }[] {
  const has = (what: Capability): number => (can.includes(what) ? 1 : 0);
  const { key, revocable } = source;
  const command =
    revocable.length > 0
      ? fc.oneof(
          ...revocable.map((c) => ({ weight: COMMON.has(c) ? 4 : 1, arbitrary: fc.constant(c) })),
        )
      : fc.constant('get');
  const removable = fc.constantFrom('lock' as const, 'lock' as const, 'fence' as const, 'turns' as const, 'writer' as const); // prettier-ignore
  return [
    { weight: 3, arbitrary: fc.record({ type: fc.constant('force' as const), via: fc.constant('service' as const), svc: svcArb, key }) }, // prettier-ignore
    { weight: 1 * has('cli'), arbitrary: fc.record({ type: fc.constant('force' as const), via: fc.constant('cli' as const), svc: fc.constant(0), key }) }, // prettier-ignore
    {
      weight: 4 * has('remove'),
      arbitrary: fc.record({
        type: fc.constant('remove' as const),
        how: fc.constantFrom('DEL' as const, 'UNLINK' as const),
        // The memory store's outside delete reaches lock keys only.
        part: has('flushall') ? removable : fc.constant('lock' as const),
        key,
      }),
    },
    { weight: 1 * has('flushall'), arbitrary: fc.constant({ type: 'flushall' as const }) },
    { weight: 2 * has('restart'), arbitrary: fc.record({ type: fc.constant('restart' as const), persist: fc.boolean() }) }, // prettier-ignore
    { weight: 3 * has('acl'), arbitrary: fc.record({ type: fc.constant('acl' as const), command, forMs: fc.integer({ min: 200, max: 2_000 }) }) }, // prettier-ignore
    { weight: 4, arbitrary: fc.record({ type: fc.constant('stall' as const), svc: svcArb, ms: stallMs }) }, // prettier-ignore
    { weight: 6 * has('foreign'), arbitrary: foreignArb(key) },
    { weight: 5, arbitrary: crowdArb(key) },
    { weight: 4, arbitrary: handOffNearEndArb(key) },
    { weight: 3, arbitrary: overstayArb(key, has('foreign') > 0) },
    { weight: 3, arbitrary: staleArb },
    { weight: 1, arbitrary: bulkArb },
  ];
}
