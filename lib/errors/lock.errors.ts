/** How one node of a multi-node store (Redlock) answered. */
export interface NodeOutcome {
  /** `host:port` of the node. */
  readonly node: string;
  readonly outcome: 'acquired' | 'busy' | 'failed';
  /** Why it failed (timeout, connection refused…). */
  readonly error?: string;
}

/**
 * Every error this library throws is a {@link LockError}. Each one carries the lock key and a
 * message that says what to do about it.
 *
 * The errors also have the shape of the `http-errors` package (`statusCode`, `status`,
 * `expose`), so Nest's default exception filter answers with the right status code (409 for a
 * busy lock, 503 for an unreachable store) without a filter of the user's and without this
 * file importing anything from Nest.
 */
export abstract class LockError extends Error {
  /** A stable, machine-readable code, e.g. `'LOCK_BUSY'`. */
  abstract readonly code: string;
  /** HTTP status Nest answers with when this error escapes a request handler. */
  readonly statusCode: number;
  /** Same as {@link statusCode}; part of the `http-errors` shape. */
  readonly status: number;
  /** Whether the message is safe to show to an HTTP client. */
  readonly expose: boolean;
  /**
   * What a client may be told: the resource and the outcome, without the class and method that
   * took the lock, Redis addresses or advice meant for the developer (those stay in `message`).
   */
  abstract readonly publicMessage: string;

  protected constructor(
    message: string,
    /** The lock key (without the module's prefix) the error is about. */
    readonly key: string | undefined,
    statusCode: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
    this.statusCode = statusCode;
    this.status = statusCode;
    this.expose = statusCode < 500 || statusCode === 503;
  }
}

/** The lock is held by someone else and could not be taken within `wait`. */
export class LockBusyError extends LockError {
  readonly code = 'LOCK_BUSY';
  /** The `wait` the acquire had, in ms (0: it tried once). */
  readonly wait: number;
  /** How long the acquire actually took, in ms. */
  readonly waited: number;
  /** How each node answered the last attempt, on a multi-node (Redlock) store. */
  readonly nodes?: readonly NodeOutcome[];

  constructor(
    key: string,
    details: { wait: number; waited: number; statusCode?: number; nodes?: readonly NodeOutcome[] },
  ) {
    super(
      details.wait === 0
        ? `Lock "${key}" is busy: another holder has it. Retry later, or pass a \`wait\` to queue for it.`
        : `Lock "${key}" is busy: another holder kept it for the whole wait of ${Math.round(details.waited)} ms. ` +
            'Retry later, or raise the `wait` option.',
      key,
      details.statusCode ?? 409,
    );
    this.wait = details.wait;
    this.waited = details.waited;
    this.nodes = details.nodes;
  }

  get publicMessage(): string {
    return `Resource "${this.key}" is busy. Retry later.`;
  }
}

/**
 * Why a held lock stopped being ours: its lease ran out (`expired`), its key was removed by
 * someone else before the lease ended (`vanished`), another owner holds it (`stolen`), renewal
 * could not reach the store in time (`unreachable`), or it was held past `maxHold`.
 */
export type LockLossReason = 'expired' | 'vanished' | 'stolen' | 'unreachable' | 'max-hold';

/** What each loss means and what to do about it, for `LockLostError` and the log. */
export const lossAdvice: Readonly<Record<LockLossReason, string>> = {
  expired:
    'its lease ran out before it was renewed or released. Use a longer `ttl` or keep `autoRenew` on.',
  vanished:
    'its key was removed from the store before its lease ended: a forced release, an eviction, a Redis restart without persistence, or another client deleted it. A longer `ttl` would not have helped; find what removed it.',
  stolen: 'another owner holds the key now. Something deleted or overwrote it behind our back.',
  unreachable:
    'the store could not be reached to renew it before the lease ran out. Check the Redis connection.',
  'max-hold':
    'it was held for longer than `maxHold`. Make the critical section shorter or raise `maxHold`.',
};

/**
 * A lock we held is no longer ours. Stop the work it protected. From `withLock` or a decorated
 * method, it means the lock was lost while the code ran, so another holder may have run at the
 * same time: the code's own result is on `result`, or its error on `cause`.
 */
export class LockLostError extends LockError {
  readonly code = 'LOCK_LOST';
  /** What the code that held the lock returned, when it returned. */
  readonly result?: unknown;

  constructor(
    key: string,
    readonly reason: LockLossReason,
    outcome?: { readonly result?: unknown; readonly cause?: unknown },
  ) {
    super(
      `Lock "${key}" was lost: ${lossAdvice[reason]}`,
      key,
      503,
      outcome && { cause: outcome.cause },
    );
    if (outcome && 'result' in outcome) this.result = outcome.result;
  }

  get publicMessage(): string {
    return `The lock on resource "${this.key}" was lost while the request ran, so its outcome is uncertain.`;
  }
}

/** The store (Redis) failed or could not be reached. Never means "busy". */
export class LockStoreError extends LockError {
  readonly code: string = 'LOCK_STORE_UNAVAILABLE';

  constructor(
    key: string | undefined,
    detail: string,
    cause?: unknown,
    /** How each node answered, on a multi-node (Redlock) store. */
    readonly nodes?: readonly NodeOutcome[],
  ) {
    const subject = key === undefined ? 'The lock store' : `Lock "${key}"`;
    super(`${subject}: ${detail}`, key, 503, { cause });
  }

  get publicMessage(): string {
    const subject = this.key === undefined ? 'The service' : `Resource "${this.key}"`;
    return `${subject} is temporarily unavailable. Retry later.`;
  }
}

/**
 * What kind of refusal a {@link LockStoreRefusedError} is: `authentication` (WRONGPASS, NOAUTH:
 * the credentials were refused, or the ACL user is off), `permission` (NOPERM: a command, key
 * or channel the ACL user lacks), `wrong-type` (WRONGTYPE: a lock key holds a value the library
 * did not write), `script` (a lock script failed), `read-only` (READONLY: a replica),
 * `no-script` (NOSCRIPT even after EVAL), `unknown-command` (renamed or disabled).
 */
export type LockStoreRefusal =
  | 'authentication'
  | 'permission'
  | 'wrong-type'
  | 'script'
  | 'read-only'
  | 'no-script'
  | 'unknown-command';

/**
 * The store answered, and refused the call in a way that retrying cannot fix: it refused the
 * credentials (WRONGPASS, NOAUTH), the ACL user lacks a command, key or channel (NOPERM), a lock key holds another type of value (WRONGTYPE),
 * a lock script failed, the server is a read-only replica (READONLY), or it keeps no scripts
 * (NOSCRIPT). The store is up, but misconfigured: the message names the command (or the script
 * line) and what to grant or fix, see docs/acl.md. The module logs each kind once, at ERROR;
 * the health indicator reports it while it recurs (down if a plain mutex needs the grant).
 */
export class LockStoreRefusedError extends LockStoreError {
  override readonly code = 'LOCK_STORE_REFUSED';
  /**
   * What the code that held the lock returned, when the refusal was its release's (`withLock`, a
   * decorated method): the code ran to its end, and its lock stays until its lease ends.
   */
  readonly result?: unknown;

  constructor(
    key: string | undefined,
    detail: string,
    /** The kind of refusal. */
    readonly refusal: LockStoreRefusal,
    /** What was refused, as Redis names it: a command (`time`), `channel`, `key` or script line. */
    readonly refused: string,
    cause?: unknown,
    outcome?: { readonly result?: unknown },
  ) {
    super(key, detail, cause);
    if (outcome && 'result' in outcome) this.result = outcome.result;
  }

  /** This refusal, of the release of a lock whose code returned `result`. */
  afterRun(result: unknown): LockStoreRefusedError {
    const detail =
      'the locked code ran to its end (its result is on `result`), but the release of its lock ' +
      `was refused, so the key stays until its lease ends. ${this.message}`;
    return new LockStoreRefusedError(this.key, detail, this.refusal, this.refused, this, {
      result,
    });
  }

  override get publicMessage(): string {
    const subject = this.key === undefined ? 'The service' : `Resource "${this.key}"`;
    return `${subject} cannot be locked: the lock service is misconfigured.`;
  }
}

/**
 * The lock service is shutting down. Pending acquires fail with it, and it is the reason of every
 * held lock's `signal`: finish or abandon the work. The lock is released when the work ends (or
 * left to expire if it outlasts `shutdownTimeout`), never while it runs.
 */
export class LockShutdownError extends LockStoreError {
  override readonly code = 'LOCK_SHUTDOWN';
  readonly reason = 'shutdown';

  constructor(key: string | undefined, detail: string) {
    super(key, `the lock service is shutting down: ${detail}`);
  }

  override get publicMessage(): string {
    return 'The service is shutting down. Retry later.';
  }
}

/**
 * This process already renews as many leases as it has shown it can keep alive (its event loop,
 * connection or Redis is the limit), so a new auto-renewed lease was refused before any store
 * call rather than granted and then lost. Nothing was taken.
 */
export class LockOverloadError extends LockError {
  readonly code = 'LOCK_OVERLOADED';

  constructor(
    key: string,
    /** Renewals a second the locks held here ask for. */
    readonly demand: number,
    /** Renewals a second this process was measured to keep up with. */
    readonly capacity: number,
  ) {
    super(
      `Lock "${key}" was refused: this process renews ${Math.round(demand)} leases a second and ` +
        `has kept up with ${Math.round(capacity)} lately, so one more would be lost. Use a longer ` +
        '`ttl`, hold fewer locks at once, or give the process more CPU.',
      key,
      503,
    );
  }

  get publicMessage(): string {
    return 'The service is overloaded. Retry later.';
  }
}

/** A fenced write was refused: a holder with a newer fence has written to the resource since. */
export class StaleFenceError extends LockError {
  readonly code = 'LOCK_FENCE_STALE';

  constructor(
    resource: string,
    /** The fence this writer presented. */
    readonly fence: number,
    /** The newest fence already applied to the resource. */
    readonly newestFence: number,
  ) {
    super(
      `Write to "${resource}" refused: fence ${fence} is older than fence ${newestFence} already applied there, ` +
        'so this holder lost its lock (e.g. it paused past its lease). Discard the work and retry with a new lock.',
      resource,
      409,
    );
  }

  get publicMessage(): string {
    return `Write to "${this.key}" refused: a newer holder of its lock has written since.`;
  }
}

/** A lock key (or key template) is invalid. Nothing was sent to the store. */
export class LockKeyError extends LockError {
  readonly code = 'LOCK_KEY_INVALID';
  readonly publicMessage: string;

  /** `publicMessage`: what is wrong, for a client, when `message` names code it should not see. */
  constructor(message: string, key?: string, publicMessage = message) {
    super(message, key, 400);
    this.publicMessage = publicMessage;
  }
}

/** Lock or module options are invalid. Nothing was sent to the store. */
export class LockOptionsError extends LockError {
  readonly code = 'LOCK_OPTIONS_INVALID';

  constructor(message: string, key?: string) {
    super(message, key, 500);
  }

  get publicMessage(): string {
    return 'Internal server error';
  }
}
