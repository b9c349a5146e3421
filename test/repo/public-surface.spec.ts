import { readFileSync } from 'node:fs';
import ts from 'typescript';
import * as root from '../../lib/index.js';
import * as store from '../../lib/store/index.js';
import * as testing from '../../lib/testing/index.js';

/** What applications use: the module, the service, the decorator, errors, fences, events, tokens. */
const ROOT_VALUES = [
  'ACQUIRE_CHANNEL',
  'DistributedLock',
  'EXTEND_CHANNEL',
  'LOCK_REDIS_CLIENT',
  'LOCK_STORE',
  'LockBusyError',
  'LockError',
  'LockExceptionFilter',
  'LockKeyError',
  'LockLostError',
  'LockModule',
  'LockOptionsError',
  'LockOverloadError',
  'LockService',
  'LockShutdownError',
  'LockStoreError',
  'LockStoreRefusedError',
  'MAX_FENCED_WRITES',
  'MAX_KEYS_PER_LOCK',
  'RELEASE_CHANNEL',
  'StaleFenceError',
  'currentLock',
  'fencedWrite',
  'lockErrorBody',
];

/**
 * The types the root's own signatures name. `LockStore` stays for `store` and `LOCK_STORE`; the
 * types only its members name (the store protocol) are in `nestjs-distributed-lock/store`.
 */
const ROOT_TYPES = [
  'AcquireTrace',
  'DistributedLockOptions',
  'ExtendResult',
  'ExtendTrace',
  'FencedWrite',
  'InspectOptions',
  'InspectedKind',
  'ListOptions',
  'Lock',
  'LockErrorBody',
  'LockEvent',
  'LockEventType',
  'LockHolder',
  'LockInspection',
  'LockKeySource',
  'LockKind',
  'LockLossReason',
  'LockModuleOptions',
  'LockOptions',
  'LockOptionsFactory',
  'LockOwner',
  'LockProcess',
  'LockRedisClient',
  'LockStats',
  'LockStore',
  'LockStoreRefusal',
  'LockSummary',
  'LockWaiter',
  'NodeOutcome',
  'OnBusy',
  'OnLost',
  'OnLostCall',
  'RedisClusterConfig',
  'RedisWrite',
  'RedlockOptions',
  'ReleaseResult',
  'ReleaseTrace',
  'ReplicaAcknowledgement',
  'StoreClient',
  'StoreEvent',
  'StoreOperation',
  'TraceOutcome',
  'WithLockOptions',
];

/** The names an entry file re-exports, split into values and type-only exports. */
function reExports(file: string): { values: string[]; types: string[] } {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022);
  const values: string[] = [];
  const types: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement) || !statement.exportClause) continue;
    if (!ts.isNamedExports(statement.exportClause)) continue;
    for (const element of statement.exportClause.elements) {
      const typeOnly = statement.isTypeOnly || element.isTypeOnly;
      (typeOnly ? types : values).push(element.name.text);
    }
  }
  return { values: values.sort(), types: types.sort() };
}

describe('the root entry', () => {
  it('exports exactly the values applications use', () => {
    expect(Object.keys(root).sort()).toEqual(ROOT_VALUES);
    expect(reExports('lib/index.ts').values).toEqual(ROOT_VALUES);
  });

  it('exports exactly the types its signatures name', () => {
    expect(reExports('lib/index.ts').types).toEqual(ROOT_TYPES);
  });
});

describe('nestjs-distributed-lock/store', () => {
  it('exports the store classes, the memory store being the one of ./testing', () => {
    expect(Object.keys(store).sort()).toEqual([
      'MemoryLockStore',
      'RedisLockStore',
      'RedlockLockStore',
    ]);
    expect(store.MemoryLockStore).toBe(testing.MemoryLockStore);
  });

  it('exports the contract and its protocol types', () => {
    expect(reExports('lib/store/index.ts').types).toEqual(
      expect.arrayContaining(['LockStore', 'AcquireRequest', 'ReleaseOptions', 'ReleaseReport']),
    );
  });
});

describe('the published types', () => {
  const configs = ['tsconfig.build.json', 'tsconfig.cjs.json'].map((name) => {
    const parsed = ts.getParsedCommandLineOfConfigFile(
      name,
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
          throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
        },
      },
    );
    return { name, parsed: parsed! };
  });

  function dtsOf(fileName: string, options: ts.CompilerOptions): string {
    const source = readFileSync(fileName, 'utf8');
    const compilerOptions = { ...options, noLib: true, types: [] };
    return ts.transpileDeclaration(source, { compilerOptions, fileName }).outputText;
  }

  /** The sources whose emitted declarations still say `@internal` under `options`. */
  function internalInDts(fileNames: readonly string[], options: ts.CompilerOptions): string[] {
    // Only a source that says `@internal` can emit it; the rest need no emit.
    const marked = fileNames.filter((file) => readFileSync(file, 'utf8').includes('@internal'));
    return marked.filter((file) => dtsOf(file, options).includes('@internal'));
  }

  const SERVICE = 'lib/nest/lock.service.ts';
  const ENGINE_MEMBER = /\bengine\??:/;

  it.each(configs)('leave out every @internal member ($name)', ({ parsed }) => {
    expect(parsed.options.stripInternal).toBe(true);
    expect(internalInDts(parsed.fileNames, parsed.options)).toEqual([]);
    expect(dtsOf(SERVICE, parsed.options)).not.toMatch(ENGINE_MEMBER);
  });

  it('would ship LockService.engine without stripInternal (canary)', () => {
    const options = { ...configs[0].parsed.options, stripInternal: false };
    expect(dtsOf(SERVICE, options)).toMatch(ENGINE_MEMBER);
    expect(internalInDts([SERVICE], options)).toEqual([SERVICE]);
  });
});
