/**
 * The moves others make on the locks, as plain ops (see model-ops.ts): an operator's forced
 * release, keys deleted or flushed, Redis restarted, a grant revoked from the services' ACL
 * user, a service's event loop held up, and foreign clients holding the same keys by hand.
 */

/** `forceRelease` through a service's own LockService, or the admin CLI in a process of its own. */
export interface ForceOp {
  readonly type: 'force';
  readonly via: 'service' | 'cli';
  /** The service that asks (via 'service'). */
  readonly svc: number;
  readonly key: string;
}

/** Which of a lock's keys a DEL or UNLINK hits: the lock key or one of its companions. */
export type RemovedPart = 'lock' | 'fence' | 'turns' | 'writer';

export interface RemoveOp {
  readonly type: 'remove';
  readonly how: 'DEL' | 'UNLINK';
  readonly part: RemovedPart;
  readonly key: string;
}

/** A plain `SET NX PX` holder, with a token of its own shape, releasing and extending by compare. */
export interface ForeignOp {
  readonly type: 'foreign';
  readonly key: string;
  readonly token: string;
  readonly ttl: number;
  /** How long it keeps trying `SET NX` (one try every `spinMs`; 0: again at once). */
  readonly wait: number;
  readonly spinMs: number;
  readonly holdMs: number;
  /** A compare-and-PEXPIRE to this ttl halfway through the hold, if set. */
  readonly extendTo?: number;
}

export type WorldOp =
  | ForceOp
  | RemoveOp
  | ForeignOp
  | { readonly type: 'flushall' }
  | { readonly type: 'restart'; readonly persist: boolean }
  | { readonly type: 'acl'; readonly command: string; readonly forMs: number }
  | { readonly type: 'stall'; readonly svc: number; readonly ms: number };

export const WORLD_OP_TYPES: ReadonlySet<string> = new Set([
  'force',
  'remove',
  'foreign',
  'flushall',
  'restart',
  'acl',
  'stall',
]);

/** One line per move, as a shrunk sequence prints it. */
export function describeWorldOp(op: WorldOp): string {
  switch (op.type) {
    case 'force':
      return op.via === 'cli'
        ? `cli release ${op.key} --force`
        : `s${op.svc}.forceRelease(${op.key})`;
    case 'remove':
      return `${op.how} ${op.part === 'lock' ? op.key : `${op.key}␟${op.part}`}`;
    case 'foreign': {
      const extend = op.extendTo !== undefined ? ` extend→${op.extendTo}` : '';
      return `foreign SET ${op.key} ${JSON.stringify(op.token)} NX PX ${op.ttl} (wait ${op.wait}, spin ${op.spinMs}) hold=${op.holdMs}${extend}`;
    }
    case 'flushall':
      return 'FLUSHALL';
    case 'restart':
      return op.persist ? 'redis restart (SAVE first)' : 'redis restart without persistence';
    case 'acl':
      return `ACL revoke -${op.command} for ${op.forMs} ms`;
    case 'stall':
      return `s${op.svc}.busyWait(${op.ms} ms)`;
  }
}
