/** An empty key template is a mistake in code, so it fails when the class is defined, not as a 400 per call. */
import { DistributedLock, LockKeyError } from '../../lib/index.js';

it('rejects an empty key template when the decorator is applied', () => {
  expect(() => {
    class Jobs {
      @DistributedLock('')
      run() {
        return 1;
      }
    }
    return Jobs;
  }).toThrow(LockKeyError);
});
