import type { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { activeChannels } from './command-stats.js';

/**
 * Resolves once Redis has run every command the engine sent before: a PING on the engine's own
 * connection is answered after them, in order. A probe on another connection proves nothing,
 * since Redis may read that connection first.
 */
export async function caughtUp(engine: LockEngine): Promise<void> {
  await engine.store.ping();
}

/** What an engine keeps, from its `stats()`, and the release channels its Redis has subscribed. */
export interface EngineState {
  readonly queues: number;
  readonly held: number;
  readonly channels: readonly string[];
}

/** What `engineState` reads once nothing is held, queued or subscribed. */
export const ENGINE_IDLE: EngineState = Object.freeze({ queues: 0, held: 0, channels: [] });

/**
 * The engine's bookkeeping and, through `probe`, the pub/sub channels left on its Redis: all of
 * it must drain to nothing. The channels are read on the server, where a leaked subscription
 * costs something, rather than in the store's private notifier.
 */
export async function engineState(engine: LockEngine, probe: Redis): Promise<EngineState> {
  const { queues, held } = engine.stats();
  return { queues, held, channels: await activeChannels(probe) };
}

/** True once the engine's bookkeeping has drained (see `ENGINE_IDLE`). */
export async function engineIdle(engine: LockEngine, probe: Redis): Promise<boolean> {
  const { queues, held, channels } = await engineState(engine, probe);
  return queues === 0 && held === 0 && channels.length === 0;
}
