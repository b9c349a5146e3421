/**
 * A lock service's engine, built as an application builds it: through the module's factory, so
 * that module options are validated as `LockModule.forRoot` validates them.
 */
import type { Cluster, Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { LockOptionsError } from '../../lib/errors/lock.errors.js';
import { createLockEngine } from '../../lib/nest/lock-engine.factory.js';
import type { LockStore } from '../../lib/stores/lock-store.interface.js';
import { clientUnderTest } from '../harness/client-under-test.js';
import { storeUnderTest } from '../harness/test-engine.js';
import type { ServiceSetup } from './model-ops.js';

export const PREFIX = 'lock:';

/** Long enough that a loaded 2-core machine never times a call out without a fault. */
const STORE_TIMEOUT = 5_000;

export interface ServiceEngine {
  readonly engine: LockEngine;
  /** Set when bootstrap refused the drawn options and a rounded `pollCap` was used instead. */
  readonly note?: string;
}

/** An engine on a client (or a shared store); the caller closes the client after the engine. */
export function serviceEngine(
  target: Redis | Cluster | LockStore,
  setup: ServiceSetup,
): ServiceEngine {
  // Through the client library under test (LOCK_TEST_CLIENT, or --client): its store is closed
  // with the engine.
  const mine =
    'status' in target && clientUnderTest() !== 'ioredis' ? storeUnderTest(target) : undefined;
  const on = mine
    ? { store: mine }
    : 'status' in target
      ? { redis: target }
      : { store: target as LockStore };
  const build = (pollCap: number): LockEngine =>
    createLockEngine({
      ...on,
      keyPrefix: PREFIX,
      pollCap,
      localHandoffs: setup.localHandoffs,
      storeTimeout: STORE_TIMEOUT,
      // Locks still held at the end of a run are left to expire, as after a crash.
      shutdownTimeout: 0,
      logger: false,
    });
  const closing = (engine: LockEngine): LockEngine => {
    if (!mine) return engine;
    const close = engine.close.bind(engine);
    return Object.assign(engine, { close: () => close().finally(() => mine.close()) });
  };
  try {
    return { engine: closing(build(setup.pollCap)) };
  } catch (error) {
    // Refusing a fractional millisecond option at bootstrap is one correct answer to it.
    if (!(error instanceof LockOptionsError) || Number.isInteger(setup.pollCap)) throw error;
    return {
      engine: closing(build(Math.ceil(setup.pollCap))),
      note: `bootstrap refused: ${error.message}`,
    };
  }
}
