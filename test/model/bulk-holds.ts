/**
 * Hundreds of leases due at once: one service takes a few hundred locks together, each on a key
 * of its own, and holds them. What only many leases reach (renewals in slices and lines, timers
 * shared by all) is judged from one record per hold: which locks were lost, when, and what they
 * claimed then; and Redis is read for all of them halfway through.
 */
import type { Cluster, Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import type { Lock } from '../../lib/engine/lock.interface.js';
import { WAITERS_MARK } from '../../lib/stores/redis/scripts/lua-helpers.js';
import { ROUNDING_MS } from './held-audit.js';
import type { BulkOp } from './model-ops.js';
import { detailsOf } from './outcome-class.js';
import { MS, now, nowText, type BulkLoss, type ServiceReport } from './model-records.js';
import { outcomeOf, sleepOr } from './service-calls.js';

/** How often each held lock's claim is sampled (its deadline when the loss came). */
const SAMPLE_MS = 20;
/** Findings reported per hold. */
const MAX_FINDINGS = 10;

export class BulkHolds {
  private readonly stopped = new AbortController();

  constructor(
    private readonly svc: number,
    private readonly engine: LockEngine,
    private readonly probe: Redis | Cluster | undefined,
    private readonly prefix: string,
    private readonly emit: (report: ServiceReport) => void,
  ) {}

  stop(): void {
    this.stopped.abort();
  }

  async run(op: BulkOp, id: string): Promise<void> {
    const keys = Array.from({ length: op.count }, (_, i) => `bulk.${id}.${i}`);
    const start = nowText();
    const opts = { ttl: op.ttl, wait: 0 };
    const settled = await Promise.allSettled(keys.map((key) => this.engine.acquire(key, opts)));
    const held = nowText();
    const locks: { key: string; lock: Lock; claim: bigint }[] = [];
    settled.forEach((result, i) => {
      if (result.status === 'fulfilled')
        locks.push({ key: keys[i]!, lock: result.value, claim: 0n });
      else this.failed(`${id}#${i}`, keys[i]!, start, result.reason);
    });
    const losses: BulkLoss[] = [];
    const sample = (): void => {
      const at = now();
      for (const entry of locks)
        if (entry.lock.isHeld) entry.claim = at + BigInt(Math.floor(entry.lock.remainingTime() * 1000)) * (MS / 1000n); // prettier-ignore
    };
    sample();
    for (const entry of locks) {
      const lost = (): void => {
        const { reason, code } = detailsOf(entry.lock.signal.reason);
        const loss = { key: entry.key, at: nowText(), reason: reason ?? code ?? 'unknown', claim: String(entry.claim || BigInt(held)) }; // prettier-ignore
        losses.push(loss);
      };
      // Lost while the others were still being taken: told already, before the hold began.
      if (entry.lock.signal.aborted) lost();
      else entry.lock.signal.addEventListener('abort', lost, { once: true });
    }
    const sampler = setInterval(sample, SAMPLE_MS);
    try {
      await sleepOr(op.holdMs / 2, this.stopped.signal);
      await this.audit(id, locks);
      await sleepOr(op.holdMs / 2, this.stopped.signal);
    } finally {
      clearInterval(sampler);
    }
    // Losses are recorded before the release, which ends the locks without a loss of their own.
    const lost = [...losses];
    const told = new Set(lost.map((loss) => loss.key));
    const released = nowText();
    const results = await Promise.all(
      locks.map(({ lock }) => lock.release().catch(() => 'failed')),
    );
    const silent = locks
      .map(({ key, claim }, i) => ({
        key,
        at: released,
        claim: String(claim),
        result: results[i]!,
      }))
      .filter(({ key, result }) => result !== 'released' && !told.has(key));
    const bulk = { id, svc: this.svc, count: op.count, ttl: op.ttl, start, held, end: nowText(), taken: locks.length, losses: lost, silent }; // prettier-ignore
    this.emit({ type: 'bulk', bulk });
  }

  /** Every lock that says it is held must find its token in Redis, for at least as long. */
  private async audit(id: string, locks: readonly { key: string; lock: Lock }[]): Promise<void> {
    const { probe } = this;
    if (!probe) return;
    const live = locks.filter(({ lock }) => lock.isHeld);
    const sent = now();
    const claims = live.map(({ lock }) => lock.remainingTime());
    const reads = await Promise.all(
      live.map(({ key }) =>
        Promise.all([probe.get(this.prefix + key), probe.pttl(this.prefix + key)]).catch(
          () => undefined,
        ),
      ),
    );
    const answered = now();
    const took = Number(answered - sent) / 1e6;
    let findings = 0;
    live.forEach(({ key, lock }, i) => {
      const read = reads[i];
      // A few findings tell the story (a flush finds them all); hundreds would drown it.
      if (findings >= MAX_FINDINGS) return;
      if (!read || !lock.isHeld || lock.remainingTime() <= 1) return;
      const [value, pttl] = read;
      const ours = value === lock.token || value === lock.token + WAITERS_MARK;
      if (ours && pttl >= claims[i]! - took - ROUNDING_MS) return;
      const what = ours
        ? `${id}#${i} claims ${Math.round(claims[i]!)} ms left, but Redis holds "${key}" for ${pttl} ms more`
        : `${id}#${i} isHeld with ${Math.round(claims[i]!)} ms left, but "${key}" holds ${JSON.stringify(value)} (pttl ${pttl})`;
      findings++;
      const audit = { svc: this.svc, section: `${id}#${i}`, key, from: String(sent), to: String(answered), what }; // prettier-ignore
      this.emit({ type: 'audit', audit });
    });
  }

  private failed(id: string, key: string, start: string, error: unknown): void {
    const outcome = outcomeOf(this.svc, id, 'bulk', [key], { wait: 0 }, start, error);
    this.emit({ type: 'outcome', outcome });
  }
}
