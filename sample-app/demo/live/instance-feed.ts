import { request, type ClientRequest } from 'node:http';
import type { InstanceSnapshot, LiveSnapshot } from '../../src/live/live-snapshot.js';
import type { NamedInstance } from './live-stack.js';

/** A snapshot older than this (the instance paused, or busy) shows the instance as not answering. */
const STALE_MS = 1_000;
const RECONNECT_MS = 500;

/**
 * Follows every instance's own `/live/events` stream and keeps the latest snapshot of each, so
 * the hub can send one merged snapshot to the page. A dropped stream (an instance restarting,
 * or closing) is opened again.
 */
export class InstanceFeed {
  private readonly latest = new Map<NamedInstance, LiveSnapshot>();
  private readonly calls = new Set<ClientRequest>();
  private closed = false;

  constructor(private readonly instances: readonly NamedInstance[]) {
    for (const instance of instances) this.follow(instance);
  }

  /** The instances' states, named as the launcher names them (the hub reads the product). */
  merged(): InstanceSnapshot[] {
    const now = Date.now();
    return this.instances.map((instance) => {
      const snapshot = this.latest.get(instance);
      const own = snapshot?.instances[0];
      const base = own ?? {
        pid: instance.process.pid!,
        answers: {},
        wait: [],
        hold: [],
        held: 0,
      };
      return {
        ...base,
        name: `${instance.name} ${new URL(instance.url).port}`,
        state: stateOf(instance, now, snapshot),
      };
    });
  }

  /** The counters an instance last reported, e.g. to compare before and after a pause. */
  answersOf(instance: NamedInstance): Readonly<Record<string, number>> {
    return this.latest.get(instance)?.instances[0]?.answers ?? {};
  }

  close(): void {
    this.closed = true;
    for (const call of this.calls) call.destroy();
  }

  private follow(instance: NamedInstance): void {
    if (this.closed) return;
    const call = request(`${instance.url}/live/events`, {
      headers: { accept: 'text/event-stream' },
    });
    this.calls.add(call);
    let ended = false;
    const again = (): void => {
      if (ended) return;
      ended = true;
      this.calls.delete(call);
      if (!this.closed) setTimeout(() => this.follow(instance), RECONNECT_MS).unref();
    };
    call.on('error', again);
    call.on('response', (response) => {
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const data = buffer
            .slice(0, end)
            .split('\n')
            .find((line) => line.startsWith('data:'));
          buffer = buffer.slice(end + 2);
          if (data) this.latest.set(instance, JSON.parse(data.slice(5)) as LiveSnapshot);
        }
      });
      response.on('end', again);
    });
    call.end();
  }
}

function stateOf(instance: NamedInstance, now: number, snapshot?: LiveSnapshot): string {
  if (instance.process.exitCode !== null || instance.process.signalCode !== null) return 'stopped';
  if (instance.paused) return 'paused (SIGSTOP)';
  if (!snapshot || now - snapshot.at > STALE_MS) return 'not answering';
  return snapshot.instances[0]?.state ?? 'up';
}
