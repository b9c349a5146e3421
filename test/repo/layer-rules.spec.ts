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
    ['the engine importing the Nest face', 'lib/engine/x.ts', "import '../nest/lock.service.js';"],
    ['the engine importing Nest', 'lib/engine/x.ts', "import { Logger } from '@nestjs/common';"],
    [
      'a store importing the engine',
      'lib/stores/redis/x.ts',
      "import '../../engine/hold/held-lock.js';",
    ],
    ['a store importing a decorator', 'lib/stores/x.ts', "import '../nest/decorators/x.js';"],
    ['the wait policy importing the engine', 'lib/policy/x.ts', "import '../engine/x.js';"],
    ['the bench importing sample-app code', 'bench/x.ts', "import '../sample-app/demo/x.js';"],
    [
      'the errors importing a store',
      'lib/errors/x.ts',
      "import '../stores/lock-store.interface.js';",
    ],
    [
      'the Nest face importing the Redis store',
      'lib/nest/lock-store.tokens.ts',
      "import { RedisLockStore } from '../stores/redis/redis-lock.store.js';",
    ],
    [
      'the health indicator importing the Redlock store',
      'lib/nest/health/lock-health.indicator.ts',
      "import { RedlockLockStore } from '../../stores/redlock/redlock-lock.store.js';",
    ],
    [
      'the Nest face importing the memory store',
      'lib/nest/x.ts',
      "import '../stores/memory/memory-lock.store.js';",
    ],
    [
      'the health entry importing Redis commands',
      'lib/health/x.ts',
      "import '../stores/redis/redis-health.js';",
    ],
    [
      'a test importing built internals',
      'test/x.spec.ts',
      "import '../dist/engine/hold/held-lock.js';",
    ],
  ])('rejects %s', async (_, filePath, code) => {
    expect(await restrictedImports(filePath, code)).toHaveLength(1);
  });

  it.each([
    [
      'the Nest face importing the engine',
      'lib/nest/lock.service.ts',
      "import '../engine/lock-engine.js';",
    ],
    [
      'the engine importing a store',
      'lib/engine/x.ts',
      "import '../stores/lock-store.interface.js';",
    ],
    ['a store importing the errors', 'lib/stores/x.ts', "import '../errors/lock.errors.js';"],
    ['a store following the wait policy', 'lib/stores/x.ts', "import '../policy/wait-policy.js';"],
    ['the bench importing the built package', 'bench/x.ts', "import '../dist/index.js';"],
    [
      'the store factory building the stores',
      'lib/nest/lock-store.factory.ts',
      "import { RedisLockStore } from '../stores/redis/redis-lock.store.js';",
    ],
    [
      'the health indicator using the store contract',
      'lib/nest/health/x.ts',
      "import { pingHealth } from '../../stores/store-health.js';",
    ],
    [
      "the module options naming a store's options",
      'lib/nest/interfaces/x.ts',
      "import type { RedlockOptions } from '../../stores/redlock/redlock-options.js';",
    ],
  ])('allows %s', async (_, filePath, code) => {
    expect(await restrictedImports(filePath, code)).toEqual([]);
  });
});

describe('the Nest face', () => {
  // Health and the injected client are store capabilities: only the factory builds a store.
  it('names no concrete store outside the store factory', async () => {
    const eslint = new ESLint({ cwd: process.cwd() });
    const results = await eslint.lintFiles(['lib/nest/**/*.ts', 'lib/health/**/*.ts']);
    const offending = results.flatMap((result) =>
      result.messages
        .filter((message) => message.ruleId === 'no-restricted-imports')
        .map((message) => `${result.filePath.replace(`${process.cwd()}/`, '')}:${message.line}`),
    );
    expect(offending).toEqual([]);
  });
});

describe('the library and its tests', () => {
  // Unit specs next to the code test one module; anything on the shared harness lives in test/.
  it('has no file under lib/ that imports from test/', async () => {
    const { readFile, readdir } = await import('node:fs/promises');
    const files = (await readdir('lib', { recursive: true })).filter((f) => f.endsWith('.ts'));
    const importing: string[] = [];
    for (const file of files) {
      const source = await readFile(`lib/${file}`, 'utf8');
      if (/(from|import)\s*\(?\s*'(\.\.\/)+test\//.test(source)) importing.push(file);
    }
    expect(importing).toEqual([]);
  });
});
