/**
 * The moves others make, applied to a run's store and recorded in its history with the window
 * in which each happened: the admin CLI's forced release, DEL/UNLINK of a lock key or of a
 * companion, FLUSHALL, a restart with or without persistence, a grant revoked from the services'
 * ACL user and given back, and foreign clients on the keys. (A service's own forced release and
 * its stalls run in the service: see service-driver.ts.)
 */
import { companionKey } from '../../lib/stores/redis/redis-commands.js';
import { cliForceRelease } from './admin-cli.js';
import { runForeign } from './foreign-client.js';
import type { Backend } from './model-backend.js';
import type { History } from './model-history.js';
import { now, nowText, OPEN, type RemovalRecord } from './model-records.js';
import type { WorldOp } from './world-ops.js';

/** The end of a window still open (a grant not yet given back). */
const OPEN_AT = BigInt(OPEN);

export class OutsideMoves {
  private readonly running = new Set<Promise<void>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Grants revoked and not yet given back, with the windows each opened. */
  private readonly revoked = new Map<string, { readonly windows: { to: bigint }[] }>();
  private foreigners = 0;

  constructor(
    private readonly backend: Backend,
    private readonly history: History,
    private readonly prefix: string,
  ) {}

  get busy(): boolean {
    return this.running.size > 0;
  }

  /** Applies `op` (a move of the world, other than a service's own); returns once it is made. */
  async apply(op: WorldOp): Promise<void> {
    switch (op.type) {
      case 'force':
        return this.track(this.cliRelease(op.key));
      case 'remove':
        return this.remove(op.key, op.part, op.how);
      case 'flushall':
        return this.removeAll('FLUSHALL', () => this.backend.flushAll());
      case 'restart': {
        const kind = op.persist ? 'restart with persistence' : 'restart without persistence';
        const window = this.history.fault('restart', undefined);
        await this.removeAll(kind, () => this.backend.restart(op.persist));
        window.to = now();
        return;
      }
      case 'acl':
        return this.revoke(op.command, op.forMs);
      case 'foreign': {
        const client = this.backend.client();
        const id = `f${++this.foreigners}`;
        const emit = this.history.ingest.bind(this.history);
        const work = runForeign(op, id, client, this.prefix, emit);
        return this.track(work.finally(() => client.disconnect()));
      }
      case 'stall':
        throw new Error('a stall runs in its service');
    }
  }

  /** Gives every revoked grant back, and waits for the foreign clients and the CLI. */
  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    await Promise.all([...this.revoked.keys()].map((command) => this.grantBack(command)));
    await Promise.allSettled([...this.running]);
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => {
      this.history.violations.push(`outside move failed: ${String(error)}`);
    });
    this.running.add(tracked);
    void tracked.finally(() => this.running.delete(tracked));
  }

  /** The window opens as the CLI starts: it may remove the lock at any moment until it exits. */
  private async cliRelease(key: string): Promise<void> {
    const removal = this.history.removalStarted('cli release --force', [key]);
    try {
      const released = await cliForceRelease(this.backend.cliArgs(), key, this.prefix);
      if (!released) this.history.removals.splice(this.history.removals.indexOf(removal), 1);
    } catch (error) {
      // An unreachable store (a restart, a cut) is the CLI's to report, not a lock's defect.
      if (!this.history.anyFault(BigInt(removal.from), now())) throw error;
    } finally {
      // It may have removed the lock before it failed: a removal all the same.
      removal.to = nowText();
    }
  }

  private async remove(key: string, part: string, how: 'DEL' | 'UNLINK'): Promise<void> {
    const lockKey = this.prefix + key;
    const from = nowText();
    if (part !== 'lock') {
      // A companion's loss frees no lease; it may slow a wait (a turn list, a writer's mark).
      const window = this.history.fault('companion', undefined);
      await this.backend.removeKey(companionKey(lockKey, part as 'fence'), how).catch(() => false);
      window.to = now();
      return;
    }
    const removed = await this.backend.removeKey(lockKey, how).catch(() => true);
    if (removed) this.removed({ kind: how, keys: [key], from, to: nowText() });
  }

  private async removeAll(kind: RemovalRecord['kind'], move: () => Promise<void>): Promise<void> {
    const from = nowText();
    try {
      await move();
    } finally {
      this.removed({ kind, from, to: nowText() });
    }
  }

  private removed(removal: RemovalRecord): void {
    this.history.ingest({ type: 'removal', removal });
  }

  private async revoke(command: string, forMs: number): Promise<void> {
    if (this.revoked.has(command)) return;
    // Open until given back: a check before then sees it open.
    const window = { command, from: now(), to: OPEN_AT };
    this.history.acl.push(window);
    const fault = this.history.fault('acl', undefined);
    fault.to = OPEN_AT;
    this.revoked.set(command, { windows: [window, fault] });
    await this.backend.setGrant(command, false);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.track(this.grantBack(command));
    }, forMs);
    this.timers.add(timer);
  }

  private async grantBack(command: string): Promise<void> {
    const revoked = this.revoked.get(command);
    if (!revoked) return;
    this.revoked.delete(command);
    await this.backend.setGrant(command, true).catch(() => undefined);
    const at = now();
    for (const window of revoked.windows) window.to = at;
  }
}
