/**
 * Reproduction (fails today): `@DistributedLock('')` is accepted when the class is defined, so
 * the mistake only shows at run time, on every call, as LockKeyError "A lock key must not be
 * empty" (HTTP 400, as if the client had sent bad data). compileKeyTemplate in
 * lib/keys/key-template.compiler.ts should reject a template that can only produce an empty key.
 * Run: NODE_OPTIONS=--experimental-vm-modules npx jest --selectProjects integration --testMatch '<rootDir>/test/repro/*.repro.ts'
 */
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
