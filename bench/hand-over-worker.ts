/**
 * The waiting process of the hand-over cell: one LockService that waits for every key the
 * parent holds, and notes when each was granted (ms since the epoch, with sub-ms precision,
 * comparable with the parent's clock on the same machine). The parent sends `wait` ({ url,
 * prefix, count }), answered by `waiting` once every first attempt has found its key busy; then
 * `mark` just before it releases them; `report`, answered with the grant times once all are
 * granted (and how busy this process was meanwhile); then `exit`, which releases them.
 */
import type { EventLoopUtilization } from 'node:perf_hooks';
import { LockService, type Lock } from '../dist/index.js';
import { connect, quit } from './contenders/connect.js';
import { serveParent, type Message } from './worker-pool.js';

let service: LockService | undefined;
let client: Awaited<ReturnType<typeof connect>> | undefined;
let grants: Promise<Lock>[] = [];
const grantedAt: number[] = [];
/** Event-loop utilisation and CPU time since `mark`, sent just before the releases begin. */
let cpuSince: NodeJS.CpuUsage | undefined;
let busySince: EventLoopUtilization | undefined;

const now = (): number => performance.timeOrigin + performance.now();

async function handle(message: Message): Promise<Message> {
  switch (message.type) {
    case 'wait': {
      client = await connect(String(message.url));
      service = new LockService({ redis: client });
      const count = Number(message.count);
      let contended = 0;
      let allContended!: () => void;
      const busy = new Promise<void>((resolve) => (allContended = resolve));
      const watching = service.events$.subscribe((event) => {
        if (event.type === 'contended' && ++contended === count) allContended();
      });
      grants = Array.from({ length: count }, async (_, i) => {
        const lock = await service!.acquire(`${String(message.prefix)}:${i}`, {
          ttl: 30_000,
          wait: 120_000,
        });
        grantedAt[i] = now();
        return lock;
      });
      await busy;
      watching.unsubscribe();
      return { type: 'waiting' };
    }
    case 'mark':
      busySince = performance.eventLoopUtilization();
      cpuSince = process.cpuUsage();
      return { type: 'marked' };
    case 'report': {
      await Promise.all(grants);
      const { utilization } = performance.eventLoopUtilization(busySince);
      const cpu = process.cpuUsage(cpuSince);
      return { type: 'granted', at: grantedAt, busy: utilization, cpuUs: cpu.user + cpu.system };
    }
    case 'exit':
      await Promise.all((await Promise.all(grants)).map((lock) => lock.release()));
      await service?.onApplicationShutdown();
      if (client) await quit(client);
      process.exit(0);
  }
  throw new Error(`unknown message "${message.type}"`);
}

serveParent(handle);
