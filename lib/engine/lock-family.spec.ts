import { describeLockFamily } from '../../test/harness/lock-family.contract.js';
import { useMemoryEngine } from '../../test/harness/test-engine.js';

describe('the lock family on the memory store', () => {
  const memory = useMemoryEngine();
  describeLockFamily(() => ({ engine: memory.engine, keys: async () => memory.store.keys() }));
});
