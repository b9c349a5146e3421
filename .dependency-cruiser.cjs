/**
 * The dependency rules `npm run lint` holds the code to (dependency-cruiser): no import cycle
 * anywhere, type-only imports included, and one direction of flow in the engine and the stores.
 * docs/ARCHITECTURE.md draws its maps from the same cruise (`npm run docs:maps`).
 */

/** The engine's layers, lowest first: each may import those before it, never those after. */
const ENGINE_LAYERS = ['request', 'wait', 'store-calls', 'hold', 'acquire'];
const engine = (layer) => `^lib/engine/${layer}/`;
/** The engine's face (lock-engine.ts, lock-inspections.ts): above every layer. */
const ENGINE_FACE = '^lib/engine/(lock-engine|lock-inspections)\\.ts$';
/** The words every layer shares (events, the Lock interface): below every layer. */
const ENGINE_WORDS = '^lib/engine/(lock\\.events|lock\\.interface)\\.ts$';

const layerRules = ENGINE_LAYERS.flatMap((layer, i) => [
  ...ENGINE_LAYERS.slice(i + 1).map((above) => ({
    name: `engine-${layer}-not-${above}`,
    comment: `lib/engine/${layer}/ sits below lib/engine/${above}/ (${ENGINE_LAYERS.join(' → ')})`,
    severity: 'error',
    from: { path: engine(layer) },
    to: { path: engine(above) },
  })),
  {
    name: `engine-${layer}-not-face`,
    comment: `lib/engine/${layer}/ sits below the engine's face`,
    severity: 'error',
    from: { path: engine(layer) },
    to: { path: ENGINE_FACE },
  },
]);

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Dependencies flow one way: no file reaches itself again, type imports included.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'engine-words-below-layers',
      comment: "The engine's shared words import none of its layers",
      severity: 'error',
      from: { path: ENGINE_WORDS },
      to: { path: `^lib/engine/(${ENGINE_LAYERS.join('|')})/` },
    },
    {
      name: 'stores-apart',
      comment:
        'The memory store and the Redis store stand alone; Redlock is built on Redis stores.',
      severity: 'error',
      from: { path: '^lib/stores/(memory|redis)/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^lib/stores/(memory|redis|redlock)/', pathNot: '^lib/stores/$1/' },
    },
    {
      name: 'scripts-are-leaves',
      comment: 'The Lua scripts import nothing of the store that runs them.',
      severity: 'error',
      from: { path: '^lib/stores/redis/scripts/' },
      to: { path: '^lib/stores/redis/[^/]+$' },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
  },
};
