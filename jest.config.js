import { availableParallelism } from 'node:os';

/** Jest 30 + ts-jest in ESM mode; run through `npm test` (NODE_OPTIONS=--experimental-vm-modules). */
const transform = {
  '^.+\\.ts$': [
    'ts-jest',
    { useESM: true, tsconfig: 'tsconfig.json', diagnostics: { warnOnly: false } },
  ],
};
const common = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    // The sample app imports the package by name; tests run it against the source.
    '^nestjs-distributed-lock$': '<rootDir>/lib/index.ts',
    '^nestjs-distributed-lock/testing$': '<rootDir>/lib/testing/index.ts',
    '^nestjs-distributed-lock/store$': '<rootDir>/lib/store/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // CI also runs the Redis suites on ioredis 5: IOREDIS_PATH names its folder (.ci/run).
    ...(process.env.IOREDIS_PATH && { '^ioredis(/.*)?$': `${process.env.IOREDIS_PATH}$1` }),
  },
  transform,
  testEnvironment: 'node',
  // Captures the library's `[LockModule]` log lines (test/harness/lock-logs.ts).
  setupFilesAfterEnv: ['<rootDir>/test/harness/jest.setup.ts'],
};

export default {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/lib/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/**/*.spec.ts'],
      // test/compat holds apps with their own test suites, run by test/compat/run-apps.sh.
      testPathIgnorePatterns: [
        '/node_modules/',
        '<rootDir>/test/chaos/',
        '<rootDir>/test/compat/',
        '<rootDir>/test/scale/',
        '<rootDir>/test/browser/',
      ],
      globalSetup: '<rootDir>/test/harness/global-setup.ts',
    },
    {
      // Fault injection against real processes: `npm run test:chaos` (CHAOS_PROFILE=long for more rounds).
      ...common,
      displayName: 'chaos',
      testMatch: ['<rootDir>/test/chaos/**/*.spec.ts'],
      globalSetup: '<rootDir>/test/harness/global-setup.ts',
    },
    {
      // Many locks, measured against thresholds: `npm run test:scale`, alone on an idle machine.
      ...common,
      displayName: 'scale',
      testMatch: ['<rootDir>/test/scale/**/*.spec.ts'],
      globalSetup: '<rootDir>/test/harness/global-setup.ts',
    },
    {
      // The seckill demos as a user runs them, apart from the timed suites: the live page in
      // Debian's Chromium (CI installs it), and the commands' process trees under signals.
      // `npm run test:browser`.
      ...common,
      displayName: 'browser',
      testMatch: ['<rootDir>/test/browser/**/*.spec.ts'],
    },
  ],
  testTimeout: 30000,
  // Jest's default, one worker fewer than the cores, runs a 2-core machine's `npm test` one file
  // at a time, though most of it waits on Redis, child processes and timers; every file starts
  // its own servers on free ports. The scale and chaos suites run in band (package.json): they
  // measure against thresholds.
  maxWorkers: Math.max(2, availableParallelism() - 1),
};
