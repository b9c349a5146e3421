import type { LoggerService } from '@nestjs/common';
import { lockLog } from './lock.logger.js';

describe('lockLog', () => {
  it('names at most ten of the keys shutdown waits for, on one line', () => {
    const lines: string[] = [];
    const logger = { log: (text: string) => void lines.push(text) } as LoggerService;
    const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);

    lockLog(logger)({ type: 'shutdown-waiting', keys, timeout: 10_000 });

    expect(lines).toEqual([
      'Shutdown waits up to 10000 ms for 12 held lock(s) to be released: ' +
        '"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9" and 2 more.',
    ]);
  });
});
