import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startInstance, type AppInstance } from '../../../sample-app/demo/app-instances.js';

/**
 * The compiled sample app (`npm test` builds it in `pretest`). Instances run it as real
 * processes, so they can be paused and killed like a production node.
 */
export const COMPILED_MAIN = fileURLToPath(
  new URL('../../../sample-app/dist/sample-app/src/main.js', import.meta.url),
);

/**
 * The app's settings reset to their defaults, so only what a test passes counts, not whatever
 * the shell running the tests happens to export.
 */
const DEFAULT_SETTINGS: Record<string, string> = {
  LOCK_BACKEND: 'redis',
  LOCK_WAIT_MS: '',
  LOCK_TTL_MS: '',
  SECKILL_FENCING: '',
  SECKILL_THINK_MS: '',
};

/** How long a stopping instance may take to close before it is killed. */

/** Sample app processes started by one test file; `stopAll` in `afterAll` ends every one. */
export class AppFleet {
  private readonly started: AppInstance[] = [];

  async start(env: Record<string, string>): Promise<AppInstance> {
    if (!existsSync(COMPILED_MAIN)) {
      throw new Error(`${COMPILED_MAIN} is missing: run \`npm run build:sample\` first.`);
    }
    const instance = await startInstance({ ...DEFAULT_SETTINGS, ...env }, COMPILED_MAIN);
    this.started.push(instance);
    return instance;
  }

  /**
   * Starts `count` instances at once. Each is recorded as soon as it listens, so one that fails
   * to start does not leave the others running.
   */
  async startMany(count: number, env: Record<string, string>): Promise<AppInstance[]> {
    return Promise.all(Array.from({ length: count }, () => this.start(env)));
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.started.map((instance) => instance.stop()));
  }
}
