/**
 * The checker's vocabulary: each step of a run is one plain, serialisable op, so that a
 * shrunk sequence prints as data a replay can run again, and an op can cross IPC to a service
 * in a child process unchanged.
 */

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

export type Op =
  | TakeOp
  | LoopOp
  | { readonly type: 'release'; readonly svc: number; readonly slot: number }
  | { readonly type: 'extend'; readonly svc: number; readonly slot: number; readonly ttl: number }
  | { readonly type: 'abort'; readonly svc: number; readonly slot: number }
  | { readonly type: 'sleep'; readonly ms: number }
  | { readonly type: 'delay'; readonly svc: number; readonly ms: number; readonly forMs: number }
  | { readonly type: 'drop' }
  | { readonly type: 'restart' }
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
  switch (op.type) {
    case 'take': {
      const nest = op.nest ? ` nest=[${op.nest.keys}]{${optionText(op.nest.opts)}}` : '';
      const onAbort = op.onAbortTake ? ` onAbort=withLock(${op.onAbortTake})` : '';
      return `s${op.svc}.${op.api}([${op.keys}], {${optionText(op.opts)}}) hold=${op.holdMs}${nest}${onAbort}`;
    }
    case 'loop':
      return `s${op.svc}.loop(${op.key}, {${optionText(op.opts)}}) ${op.workers}x${op.rounds} hold=${op.holdMs}`;
    case 'release':
    case 'abort':
      return `s${op.svc}.${op.type}(#${op.slot})`;
    case 'extend':
      return `s${op.svc}.extend(#${op.slot}, ${op.ttl})`;
    case 'sleep':
      return `sleep(${op.ms})`;
    case 'delay':
      return `s${op.svc}.delayReplies(${op.ms} ms for ${op.forMs} ms)`;
    case 'kill':
      return `s${op.svc}.SIGKILL`;
    case 'pause':
      return `s${op.svc}.SIGSTOP(${op.ms} ms)`;
    default:
      return op.type === 'drop' ? 'CLIENT KILL (every service)' : 'redis restart';
  }
}
