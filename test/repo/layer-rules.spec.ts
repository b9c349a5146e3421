import { ESLint } from 'eslint';

/** The lint errors of `code` as if it were the file at `filePath` (relative to the repo). */
async function restrictedImports(filePath: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: process.cwd() });
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages
    .filter((message) => message.ruleId === 'no-restricted-imports')
    .map((message) => message.message);
}

describe('the layer rule of `npm run lint`', () => {
  it.each([
    ['the engine importing the Nest face', 'lib/core/x.ts', "import '../lock.service.js';"],
    ['the engine importing Nest', 'lib/core/x.ts', "import { Logger } from '@nestjs/common';"],
    ['a store importing the engine', 'lib/stores/redis/x.ts', "import '../../core/held-lock.js';"],
    ['a store importing a decorator', 'lib/stores/x.ts', "import '../decorators/x.js';"],
    [
      'the errors importing a store',
      'lib/errors/x.ts',
      "import '../stores/lock-store.interface.js';",
    ],
    ['a test importing built internals', 'test/x.spec.ts', "import '../dist/core/held-lock.js';"],
  ])('rejects %s', async (_, filePath, code) => {
    expect(await restrictedImports(filePath, code)).toHaveLength(1);
  });

  it.each([
    [
      'the Nest face importing the engine',
      'lib/lock.service.ts',
      "import './core/lock-engine.js';",
    ],
    [
      'the engine importing a store',
      'lib/core/x.ts',
      "import '../stores/lock-store.interface.js';",
    ],
    ['a store importing the errors', 'lib/stores/x.ts', "import '../errors/lock.errors.js';"],
    ['the bench importing the built package', 'bench/x.ts', "import '../dist/index.js';"],
  ])('allows %s', async (_, filePath, code) => {
    expect(await restrictedImports(filePath, code)).toEqual([]);
  });
});
