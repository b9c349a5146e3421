import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Files in `files` may not import what `regex` matches: the layers import downward only. Unit
 * specs next to the code may import across layers (never from test/: test/repo checks it).
 */
function layer(files, regex, message, ignores = ['**/*.spec.ts']) {
  return {
    files,
    ignores,
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex, message }] }] },
  };
}

/** The Nest face: Nest itself, lib/nest/ and the ./testing and ./health entry points. */
const NEST_FACE = '(^@nestjs/)|/nest/|/testing/|/health/';

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
  {
    // CommonJS consumers of the packed package (test/compat): require() is what they test.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  layer(['lib/errors/**'], '^\\.\\./', 'Errors are a leaf: they import nothing of the library.'),
  layer(
    ['lib/policy/**'],
    '^\\.\\./',
    'The wait policy is a leaf: the engine and the stores follow it, and it imports nothing.',
  ),
  layer(
    ['lib/stores/**'],
    `/engine/|${NEST_FACE}`,
    'Stores are the bottom layer: they import neither the engine nor the Nest face.',
  ),
  layer(['lib/engine/**'], NEST_FACE, 'The engine does not import the Nest face.'),
  layer(
    ['lib/nest/**', 'lib/health/**'],
    // The stores' option types are the module's options, not a store.
    '/stores/(memory|redis|redlock)/(?![\\w.-]*options)',
    'Only the store factory (lib/nest/lock-store.factory.ts) names a concrete store: the Nest face uses the LockStore contract and its capabilities (`health`, `client`).',
    ['**/*.spec.ts', 'lib/nest/lock-store.factory.ts'],
  ),
  layer(
    ['test/**', 'sample-app/**'],
    '/dist/.+/',
    'Outside lib/, import the built package only through its entry points (dist/index.js).',
    [],
  ),
  layer(
    ['bench/**'],
    '/dist/.+/|/sample-app/',
    'The bench measures the package through its entry points (dist/index.js), and no sample-app code.',
    [],
  ),
);
