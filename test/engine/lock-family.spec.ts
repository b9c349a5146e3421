import { describeLockFamily } from '../harness/lock-family.contract.js';
import { useMemoryEngine } from '../harness/test-engine.js';

describe('the lock family on the memory store', () => {
  const memory = useMemoryEngine();
  describeLockFamily(() => ({ engine: memory.engine, keys: async () => memory.store.keys() }));
});
