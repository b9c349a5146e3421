import { killLiveWorkers, runWorkers } from '../harness/child-workers.js';
import { reportFigures } from '../harness/figures.js';
import { useRedisServer } from '../harness/use-redis.js';
import type { FenceWorkerConfig, FenceWorkerResult } from '../fixtures/fence-worker.js';

const PROCESSES = 2;
const PER_PROCESS = 500;

describe('fencing tokens across processes', () => {
  const redis = useRedisServer({ clients: false, beforeStop: killLiveWorkers });

  it('strictly increase, in acquisition order, over 1000 acquisitions from two processes', async () => {
    const config: FenceWorkerConfig = {
      port: redis.server.port,
      key: 'fenced',
      acquisitions: PER_PROCESS,
    };
    const configs = Array.from({ length: PROCESSES }, () => config);
    const results = await runWorkers<FenceWorkerResult>('fence-worker', configs, 40_000);

    // Each sample was read while its lock was held, and locks of one key never overlap, so
    // ordering by that time is ordering by acquisition.
    const merged = results
      .flatMap((result, process) =>
        result.samples.map(([fence, at]) => ({ fence, at: BigInt(at), process })),
      )
      .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    const fences = merged.map((sample) => sample.fence);
    const decreases = fences.filter((fence, i) => i > 0 && fence <= fences[i - 1]).length;
    const turns = merged.filter(
      (sample, i) => i > 0 && sample.process !== merged[i - 1].process,
    ).length;

    reportFigures('fencing', {
      acquisitions: fences.length,
      first: fences[0],
      last: fences.at(-1),
      turns,
      decreases,
    });
    expect(fences).toHaveLength(PROCESSES * PER_PROCESS);
    expect(fences.every((fence) => Number.isSafeInteger(fence) && fence > 0)).toBe(true);
    expect(new Set(fences).size).toBe(PROCESSES * PER_PROCESS);
    expect(decreases).toBe(0);
    // The key changed hands between the processes, so the order was tested across them.
    expect(turns).toBeGreaterThan(0);
  }, 60_000);
});
