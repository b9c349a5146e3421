import type {
  AcquireAttempt,
  AcquireRequest,
  LockStore,
  ReleaseListener,
  ReleaseOptions,
  ReleaseReport,
} from '../../lib/stores/lock-store.interface.js';
import { ForwardingStore } from './forwarding-store.js';

/** One thing a store was asked or told, with the name of the store (the "process") it went through. */
export type StoreRecord =
  /** An acquire attempt answered; `queue` is set for attempts made in turn. */
  | {
      readonly kind: 'attempt';
      readonly store: string;
      readonly token: string;
      readonly queue?: string;
      readonly acquired: boolean;
    }
  /** A release, logged when it is sent. */
  | {
      readonly kind: 'release';
      readonly store: string;
      readonly token: string;
      readonly requeue?: string;
      readonly successor?: string;
    }
  /** The same release, logged when it answered. */
  | {
      readonly kind: 'released';
      readonly store: string;
      readonly token: string;
      readonly requeue?: string;
      readonly report: ReleaseReport;
    }
  | { readonly kind: 'leave'; readonly store: string; readonly queue: string }
  /** Written by tests (e.g. a locked section), to order their own steps among the store's. */
  | { readonly kind: 'section'; readonly store: string; readonly token: string };

/**
 * A real store that logs every acquire, release and leaveTurns into `log` (which several
 * recording stores may share, so the log is one timeline of several "processes"). `muted`, set
 * before the first subscription, drops release notifications while the subscription stays real.
 */
export class RecordingStore extends ForwardingStore {
  muted = false;

  constructor(
    inner: LockStore,
    readonly name: string,
    readonly log: StoreRecord[] = [],
  ) {
    super(inner);
  }

  /** The records of this store of one kind. */
  records<K extends StoreRecord['kind']>(kind: K): Extract<StoreRecord, { kind: K }>[] {
    return this.log.filter(
      (record): record is Extract<StoreRecord, { kind: K }> =>
        record.kind === kind && record.store === this.name,
    );
  }

  /** Queue ids this store has made attempts for, in order of first use. */
  queues(): string[] {
    const ids = this.records('attempt').flatMap((record) => (record.queue ? [record.queue] : []));
    return [...new Set(ids)];
  }

  override async tryAcquire(request: AcquireRequest): Promise<AcquireAttempt> {
    const result = await this.inner.tryAcquire(request);
    const { token, queue } = request;
    this.log.push({ kind: 'attempt', store: this.name, token, queue, acquired: result.acquired });
    return result;
  }

  override async release(
    keys: readonly string[],
    token: string,
    options: ReleaseOptions = {},
  ): Promise<ReleaseReport> {
    const { requeue, successor } = options;
    const store = this.name;
    this.log.push({ kind: 'release', store, token, requeue, successor: successor?.token });
    const report = await this.inner.release(keys, token, options);
    this.log.push({ kind: 'released', store, token, requeue, report });
    return report;
  }

  override leave(key: string, queue: string): void {
    this.log.push({ kind: 'leave', store: this.name, queue });
    super.leave(key, queue);
  }

  override subscribe(key: string, onRelease: ReleaseListener): Promise<() => void> {
    return super.subscribe(key, this.muted ? () => undefined : onRelease);
  }
}
