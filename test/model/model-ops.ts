/**
 * The checker's vocabulary: each step of a run is one plain, serialisable op, so that a
 * shrunk sequence prints as data a replay can run again, and an op can cross IPC to a service
 * in a child process unchanged. The moves of others (outside the library) are in world-ops.ts.
 */
import { describeWorldOp, WORLD_OP_TYPES, type ForeignOp, type WorldOp } from './world-ops.js';

export type Api = 'acquire' | 'tryAcquire' | 'withLock' | 'decorator';

/** The lock options a take draws; `signal` is added by the service that runs it. */
export interface TakeOptions {
  ttl?: number;
  wait?: number;
  maxHold?: number;
  minHold?: number;
  autoRenew?: boolean;
  fencing?: boolean;
  limit?: number;
  mode?: 'read' | 'write';
}

/** One acquisition, held for `holdMs` (or until its signal aborts), then released. */
export interface TakeOp {
  readonly type: 'take';
  readonly svc: number;
  readonly api: Api;
  readonly keys: readonly string[];
  readonly opts: TakeOptions;
  readonly holdMs: number;
  /** Taken again inside the section: the same keys (reentrant) or others (a real lock). */
  readonly nest?: { readonly keys: readonly string[]; readonly opts: TakeOptions };
  /** A key the section's abort handler locks (user cleanup run from a library callback). */
  readonly onAbortTake?: string;
  /**
   * Code that does not listen to its signal: it holds for `holdMs` whatever happens, then
   * releases: a stale holder acting after its lease, as a lock alone cannot prevent.
   */
  readonly deaf?: boolean;
}

/** A busy worker: `workers` loops each take `key` `rounds` times, holding it `holdMs`. */
export interface LoopOp {
  readonly type: 'loop';
  readonly svc: number;
  readonly key: string;
  readonly opts: TakeOptions;
  readonly workers: number;
  readonly rounds: number;
  readonly holdMs: number;
}

/** `extend(ttl)` of an open section; with `atLeft`, once its lease is down to that many ms. */
export interface ExtendOp {
  readonly type: 'extend';
  readonly svc: number;
  readonly slot: number;
  readonly ttl: number;
  readonly atLeft?: number;
}

/**
 * Takes sent together, back to back: a key crowded past its limit, waiters lined up; then,
 * a moment later, foreign clients going for the same key.
 */
export interface BurstOp {
  readonly type: 'burst';
  readonly takes: readonly TakeOp[];
  readonly foreign?: readonly ForeignOp[];
}

/** One service takes `count` locks at once (keys of their own), holds them, then releases. */
export interface BulkOp {
  readonly type: 'bulk';
  readonly svc: number;
  readonly count: number;
  readonly ttl: number;
  readonly holdMs: number;
}

/**
 * A service's loop busy for `stallMs`, and in the same turn, before any timer of the library
 * can run, its holder of slot `slot` acts: a stale holder, if the stall outlasted its lease.
 */
export interface StaleOp {
  readonly type: 'stale';
  readonly svc: number;
  readonly slot: number;
  readonly stallMs: number;
  readonly act: 'release' | 'extend' | 'extendShort';
}

export type Op =
  | TakeOp
  | LoopOp
  | ExtendOp
  | BurstOp
  | BulkOp
  | StaleOp
  | WorldOp
  | { readonly type: 'release'; readonly svc: number; readonly slot: number }
  | { readonly type: 'abort'; readonly svc: number; readonly slot: number }
  | { readonly type: 'sleep'; readonly ms: number }
  | { readonly type: 'delay'; readonly svc: number; readonly ms: number; readonly forMs: number }
  | { readonly type: 'drop' }
  | { readonly type: 'kill'; readonly svc: number }
  | { readonly type: 'pause'; readonly svc: number; readonly ms: number };

/** Module options of one lock service, drawn per run. */
export interface ServiceSetup {
  /** May be fractional: a user can pass any positive number. */
  readonly pollCap: number;
  readonly localHandoffs: number;
  /** Runs in a child process (so it can be SIGKILLed or SIGSTOPped). */
  readonly child: boolean;
}

export interface RunSetup {
  readonly services: readonly ServiceSetup[];
}

const optionText = (opts: TakeOptions): string =>
  Object.entries(opts)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}:${JSON.stringify(value)}`)
    .join(',');

/** One line per op, as the shrunk sequence prints. */
export function describeOp(op: Op): string {
  if (WORLD_OP_TYPES.has(op.type)) return describeWorldOp(op as WorldOp);
  switch (op.type) {
    case 'take': {
      const nest = op.nest ? ` nest=[${op.nest.keys}]{${optionText(op.nest.opts)}}` : '';
      const onAbort = op.onAbortTake ? ` onAbort=withLock(${op.onAbortTake})` : '';
      const deaf = op.deaf ? ' deaf' : '';
      return `s${op.svc}.${op.api}([${op.keys}], {${optionText(op.opts)}}) hold=${op.holdMs}${deaf}${nest}${onAbort}`;
    }
    case 'burst':
      return `burst [${[...op.takes, ...(op.foreign ?? [])].map((one) => describeOp(one)).join(' | ')}]`;
    case 'bulk':
      return `s${op.svc}.bulk(${op.count} locks, {ttl:${op.ttl}}) hold=${op.holdMs}`;
    case 'stale':
      return `s${op.svc}.busyWait(${op.stallMs} ms) then ${op.act}(#${op.slot})`;
    case 'loop':
      return `s${op.svc}.loop(${op.key}, {${optionText(op.opts)}}) ${op.workers}x${op.rounds} hold=${op.holdMs}`;
    case 'release':
    case 'abort':
      return `s${op.svc}.${op.type}(#${op.slot})`;
    case 'extend': {
      const when = op.atLeft !== undefined ? ` at ${op.atLeft} ms left` : '';
      return `s${op.svc}.extend(#${op.slot}, ${op.ttl})${when}`;
    }
    case 'sleep':
      return `sleep(${op.ms})`;
    case 'delay':
      return `s${op.svc}.delayReplies(${op.ms} ms for ${op.forMs} ms)`;
    case 'kill':
      return `s${op.svc}.SIGKILL`;
    case 'pause':
      return `s${op.svc}.SIGSTOP(${op.ms} ms)`;
    case 'drop':
      return 'CLIENT KILL (every service)';
    default:
      return JSON.stringify(op);
  }
}
