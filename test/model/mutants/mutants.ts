/**
 * The mutant suite's mutants: one-line bugs of lib/, each of a kind this project has had or
 * guards against, to measure what the model checker catches at its CI budget. Each names its
 * file, the exact fragment it replaces (which must occur there exactly once, or the mutant "does
 * not apply" and the suite fails) and the targets whose code it changes.
 */

export interface Mutant {
  readonly id: string;
  /** The kind of bug, as docs/correctness.md lists them. */
  readonly kind: string;
  readonly file: string;
  readonly find: string;
  readonly replace: string;
  /** The targets that run the mutated code (the Lua scripts run on Redis and the Cluster). */
  readonly targets: readonly ('redis' | 'cluster' | 'memory')[];
}

const ALL = ['redis', 'cluster', 'memory'] as const;
const REDIS = ['redis', 'cluster'] as const;
const MEMORY = ['memory'] as const;

export const MUTANTS: readonly Mutant[] = [
  {
    id: 'late-grant-accepted',
    kind: 'a late grant accepted',
    file: 'lib/engine/store-calls/lock-calls.ts',
    find: 'return isLate(grant) ? refusals.lateGrant(request, grant) : { grant };',
    replace:
      'return isLate(grant) && grant.expiresAt < 0 ? refusals.lateGrant(request, grant) : { grant };',
    targets: ALL,
  },
  {
    id: 'deadline-ignores-shorter-extend',
    kind: 'the local deadline not following a shorter extend',
    file: 'lib/engine/hold/lease-watchdog.ts',
    find: 'lease.expiresAt = sent === entry.sent ? end : Math.min(lease.expiresAt, end);',
    replace: 'lease.expiresAt = sent < 0 ? end : Math.max(lease.expiresAt, end);',
    targets: ALL,
  },
  {
    id: 'deadline-shortened-late',
    kind: 'the local deadline not following a shorter extend',
    file: 'lib/engine/hold/lease-watchdog.ts',
    find: 'if (end < lease.expiresAt) {',
    replace: 'if (end < lease.expiresAt && ttl > lease.ttl) {',
    targets: ALL,
  },
  {
    id: 'turn-list-without-expiry',
    kind: 'a turn list written without an expiry',
    file: 'lib/stores/redis/scripts/lua-helpers.ts',
    // The PEXPIRE after the RPUSH: the one before it finds no list to expire on a first join.
    find: "  end\n  redis.call('PEXPIRE', turns_key, ${WAITERS_LIFETIME})",
    replace: "  end\n  -- redis.call('PEXPIRE', turns_key, ${WAITERS_LIFETIME})",
    targets: REDIS,
  },
  {
    id: 'semaphore-one-too-many-redis',
    kind: 'a semaphore admitting one holder too many (Redis)',
    file: 'lib/stores/redis/scripts/holder-set.scripts.ts',
    find: 'if count >= tonumber(ARGV[3]) then busy = first_live(key, now)[2] - now end',
    replace: 'if count > tonumber(ARGV[3]) then busy = first_live(key, now)[2] - now end',
    targets: REDIS,
  },
  {
    id: 'semaphore-one-too-many-memory',
    kind: 'a semaphore admitting one holder too many (memory store)',
    file: 'lib/stores/memory/memory-holder-sets.ts',
    find: 'return set.holders.size < set.limit! ? undefined : Math.min(...leases);',
    replace: 'return set.holders.size <= set.limit! ? undefined : Math.min(...leases);',
    targets: MEMORY,
  },
  {
    id: 'reader-beside-writer-redis',
    kind: 'a reader admitted beside a writer (Redis)',
    file: 'lib/stores/redis/scripts/holder-set.scripts.ts',
    find: 'if first[1] and string.byte(first[1]) == 119 then',
    replace: 'if first[1] and string.byte(first[1]) == 120 then',
    targets: REDIS,
  },
  {
    id: 'reader-beside-writer-memory',
    kind: 'a reader admitted beside a writer (memory store)',
    file: 'lib/stores/memory/memory-holder-sets.ts',
    find: 'if (set.writer !== undefined) return Math.max(...leases);',
    replace: 'if (set.writer === request.token) return Math.max(...leases);',
    targets: MEMORY,
  },
  {
    id: 'release-skips-token-compare',
    kind: 'a release that skips its token compare',
    file: 'lib/stores/redis/scripts/release.scripts.ts',
    find: "local holder = redis.pcall('GET', KEYS[1])\nif holder == ARGV[1] then",
    replace: "local holder = redis.pcall('GET', KEYS[1])\nif holder then",
    targets: REDIS,
  },
  {
    id: 'release-skips-token-compare-memory',
    kind: 'a release that skips its token compare (memory store)',
    file: 'lib/stores/memory/memory-lock.store.ts',
    find: 'if (entry?.token === token) {',
    replace: 'if (entry?.token === token || entry !== undefined) {',
    targets: MEMORY,
  },
  {
    id: 'extend-skips-token-compare',
    kind: 'an extend that skips its token compare',
    file: 'lib/stores/redis/scripts/release.scripts.ts',
    find: "elseif holder == ARGV[i] or holder == ARGV[i] .. '${WAITERS_MARK}' then",
    replace: 'elseif holder then',
    targets: REDIS,
  },
  {
    id: 'extend-skips-token-compare-memory',
    kind: 'an extend that skips its token compare (memory store)',
    file: 'lib/stores/memory/memory-lock.store.ts',
    find: "if (found.some((entry) => entry && entry.token !== token)) return 'stolen';",
    replace: "if (found.some((entry) => entry && entry.token === '')) return 'stolen';",
    targets: MEMORY,
  },
  {
    id: 'renews-first-task-slice-only',
    kind: 'renewal of only the first slice of due leases',
    file: 'lib/engine/hold/lease-watchdog.ts',
    find: 'inLibraryScope(() => setImmediate(() => this.tick()));',
    replace: 'void 0;',
    targets: ALL,
  },
  {
    id: 'renews-first-extend-slice-only',
    kind: 'renewal of only the first slice of due leases',
    file: 'lib/stores/redis/lease-renewal.ts',
    find: 'for (const slice of slices(port.cluster, leases)) {',
    replace: 'for (const slice of slices(port.cluster, leases).slice(0, 1)) {',
    targets: REDIS,
  },
  {
    id: 'fence-without-clock-floor',
    kind: 'fences without the server-clock floor',
    file: 'lib/stores/redis/scripts/lua-helpers.ts',
    find: 'local fence = math.max(last + 1, fence_clock)',
    replace: 'local fence = last + 1',
    targets: REDIS,
  },
  {
    id: 'reentry-on-another-key',
    kind: 'reentrancy granted on a different key',
    file: 'lib/engine/hold/nested-lock.ts',
    find: 'if (fullKeys.every((key) => frame.fullKeys.includes(key))) return frame.lock;',
    replace: 'if (fullKeys.some((key) => frame.fullKeys.length > 0 || key)) return frame.lock;',
    targets: ALL,
  },
  {
    id: 'hand-off-with-little-lease',
    kind: 'a local hand-off with too little lease left',
    // The confirming compare-and-PEXPIRE sets less than the lease the waiter is then given.
    file: 'lib/engine/store-calls/lock-calls.ts',
    find: 'this.start(context.store.extend([{ keys, token, kind, ttl: this.ttl }]), this.sentAt);',
    replace:
      'this.start(context.store.extend([{ keys, token, kind, ttl: Math.ceil(this.ttl / 8) }]), this.sentAt);',
    targets: ALL,
  },
  {
    id: 'hand-off-unconfirmed',
    kind: 'a local hand-off of a lease the store no longer holds',
    file: 'lib/engine/store-calls/lock-calls.ts',
    find: "const result = found === 'extended' ? 'released' : found!;",
    replace: "const result = found === 'extended' || found !== 'extended' ? 'released' : found!;",
    targets: ALL,
  },
  {
    id: 'mark-on-foreign-values',
    kind: "the waiters' mark on any value",
    file: 'lib/stores/redis/scripts/lua-helpers.ts',
    find: 'if marked or not library_value(holder) then return end',
    replace: 'if marked then return end',
    targets: REDIS,
  },
  {
    id: 'permission-not-a-refusal',
    kind: 'refusal classification',
    file: 'lib/stores/store-refusals.ts',
    find: 'if (PERMISSION.test(reply)) return permission(reply, prefix, keyGrant);',
    replace:
      "if (PERMISSION.test(reply) && reply.includes('\\n')) return permission(reply, prefix, keyGrant);",
    targets: REDIS,
  },
  {
    id: 'isheld-ignores-deadline',
    kind: 'isHeld past the local deadline',
    file: 'lib/engine/hold/held-lock.ts',
    find: "return this.state === 'held' && performance.now() < this.expiresAt;",
    replace: "return this.state === 'held';",
    targets: ALL,
  },
  {
    id: 'renewal-ignores-vanished-key',
    kind: 'renewal that ignores a vanished key',
    file: 'lib/engine/hold/lease-watchdog.ts',
    find: "if (result !== 'extended') {",
    replace: "if (result === 'stolen') {",
    targets: ALL,
  },
  {
    id: 'renewal-once-per-ttl',
    kind: 'renewal too late',
    file: 'lib/engine/hold/watched-lease.ts',
    find: 'return lease.ttl / 3;',
    replace: 'return lease.ttl;',
    targets: ALL,
  },
  {
    id: 'multi-key-takes-busy-keys',
    kind: 'a multi-key acquire that overlooks a busy key',
    file: 'lib/stores/redis/scripts/acquire.scripts.ts',
    find: "if holder and holder ~= ARGV[1] then pttl = redis.call('PTTL', KEYS[i]) end",
    replace:
      "if holder and holder ~= ARGV[1] and n < 2 then pttl = redis.call('PTTL', KEYS[i]) end",
    targets: REDIS,
  },
  {
    id: 'max-hold-ignored',
    kind: 'maxHold not enforced',
    file: 'lib/engine/hold/held-lock.ts',
    find: 'this.holdUntil = options.maxHold === undefined ? Infinity : grant.startedAt + options.maxHold;',
    replace: 'this.holdUntil = Infinity;',
    targets: ALL,
  },
  {
    id: 'successor-late-grant-kept',
    kind: 'a late grant accepted',
    file: 'lib/engine/store-calls/lock-calls.ts',
    find: 'if (grant && isLate(grant)) {',
    replace: 'if (grant && isLate(grant) && grant.expiresAt < 0) {',
    targets: REDIS,
  },
  {
    id: 'no-lease-margin',
    kind: 'a local deadline with no margin before the store can free the key',
    file: 'lib/engine/request/lock-request.ts',
    find: 'return Math.min(LEASE_MARGIN_MS, ttl / 10);',
    replace: 'return Math.min(LEASE_MARGIN_MS, ttl / 10) * 0;',
    targets: ALL,
  },
  {
    id: 'forced-release-unheard',
    kind: 'a forced release not passed to its holder',
    file: 'lib/engine/hold/lock-leases.ts',
    find: 'if (lock.fullKeys.includes(key) && (token === undefined || lock.token === token)) {',
    replace: "if (lock.fullKeys.includes(key) && token === '') {",
    targets: ALL,
  },
  {
    id: 'refused-get-read-as-holder',
    kind: 'refusal classification',
    file: 'lib/stores/redis/scripts/lua-helpers.ts',
    find: "if string.sub(value.err, 1, 9) == 'WRONGTYPE' then return '' end",
    replace: "if string.sub(value.err, 1, 9) ~= '' then return '' end",
    targets: REDIS,
  },
];
