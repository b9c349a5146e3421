import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Files in `files` may not import what `regex` matches: the layers import downward only. Unit
 * specs next to the code may use the test harness.
 */
function layer(files, regex, message, ignores = ['**/*.spec.ts']) {
  return {
    files,
    ignores,
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex, message }] }] },
  };
}

/** The Nest face: everything in lib/ above the engine. */
const NEST_FACE =
  '(^@nestjs/)|/(decorators|filters|keys|testing)/|/lock\\.(service|module|module-definition|logger|constants)\\.js$|/lock-(engine|store)\\.factory\\.js$|/interfaces/(lock-module|distributed-lock)-options';

export default tseslint.config(
  { ignores: ['**/dist/**', 'coverage/**', 'node_modules/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-floating-promises': 'off',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  layer(['lib/errors/**'], '^\\.\\./', 'Errors are a leaf: they import nothing of the library.'),
  layer(
    ['lib/policy/**'],
    '^\\.\\./',
    'The wait policy is a leaf: the engine and the stores follow it, and it imports nothing.',
  ),
  layer(
    ['lib/stores/**'],
    `/core/|${NEST_FACE}`,
    'Stores are the bottom layer: they import neither the engine (core) nor the Nest face.',
  ),
  layer(['lib/core/**'], NEST_FACE, 'The engine (core) does not import the Nest face.'),
  layer(
    ['test/**', 'bench/**', 'sample-app/**'],
    '/dist/.+/',
    'Outside lib/, import the built package only through its entry points (dist/index.js).',
    [],
  ),
);
