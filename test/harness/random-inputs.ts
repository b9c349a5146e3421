import type { Expected, InputCase } from './bad-inputs.js';

/** mulberry32: a tiny seeded PRNG, so that a failing key comes back with the same seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Pieces keys are made of, from harmless to forbidden. */
const ALPHABETS: Record<string, readonly string[]> = {
  printable: [...'abcxyzABC019-_.:/@#%&+=~,;!$()'],
  glob: [...'*?[]{}\\^'],
  blank: [' ', '\t', '\u00a0', '\u3000', '\u2028', '\ufeff', '\u2003'],
  control: ['\u0000', '\u0001', '\u0007', '\n', '\r', '\u001b', '\u007f', '\u0085', '\u009f'],
  surrogate: ['\ud800', '\udbff', '\udc00', '\udfff'],
  unicode: ['é', '€', '中', 'Ж', 'ש', '\u0301', '\u200d', '\u200b', '😀', '𝄞', '\uffff'],
};

/** Weights of each alphabet in one key: most keys valid, many broken by one character. */
const PROFILES: readonly (readonly [string, number][])[] = [
  [['printable', 1]],
  [
    ['printable', 0.8],
    ['unicode', 0.2],
  ],
  [
    ['printable', 0.7],
    ['glob', 0.1],
    ['blank', 0.2],
  ],
  [
    ['printable', 0.95],
    ['control', 0.05],
  ],
  [
    ['printable', 0.9],
    ['surrogate', 0.1],
  ],
  [['blank', 1]],
  [
    ['unicode', 0.9],
    ['control', 0.02],
    ['surrogate', 0.08],
  ],
];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}

function characterFrom(random: () => number, profile: readonly [string, number][]): string {
  let roll = random();
  for (const [alphabet, weight] of profile) {
    if ((roll -= weight) < 0) return pick(random, ALPHABETS[alphabet]);
  }
  return pick(random, ALPHABETS[profile[0][0]]);
}

/** Short keys mostly; one in six long enough to straddle the 1024-byte limit. */
export function randomKey(random: () => number): string {
  const profile = pick(random, PROFILES);
  const length =
    random() < 1 / 6 ? 300 + Math.floor(random() * 800) : 1 + Math.floor(random() * 40);
  let key = '';
  for (let i = 0; i < length; i++) key += characterFrom(random, profile);
  return key;
}

/**
 * The documented key rules, written out independently of the library: a string that is not
 * blank, at most 1024 bytes of UTF-8, without control characters or lone surrogates.
 */
export function expectedForKey(key: string): Expected {
  const valid =
    key.trim().length > 0 &&
    Buffer.byteLength(key) <= 1024 &&
    !/\p{Cc}/u.test(key) &&
    key.isWellFormed();
  return valid ? 'ok' : 'key';
}

/** A value per option, each either valid or not, with the documented rule for it. */
const OPTION_VALUES: Record<string, readonly [unknown, boolean][]> = {
  ttl: [
    [1_000, true],
    [2 ** 31 - 1, true],
    [0, false],
    [1.5, false],
    ['100', false],
    [2 ** 31, false],
    [NaN, false],
  ],
  wait: [
    [0, true],
    [10, true],
    [Infinity, true],
    [-1, false],
    ['5', false],
    [NaN, false],
  ],
  maxHold: [
    [60_000, true],
    [0, false],
    [1.5, false],
    [Infinity, false],
  ],
  autoRenew: [
    [true, true],
    [false, true],
    ['yes', false],
    [0, false],
  ],
  fencing: [
    [true, true],
    [false, true],
    [1, false],
    ['true', false],
  ],
  tll: [[1_000, false]],
};

/** Options with a few random fields; `expected` says whether any of them breaks a rule. */
export function randomOptions(random: () => number): { options: object; expected: Expected } {
  const options: Record<string, unknown> = {};
  let valid = true;
  for (const [name, values] of Object.entries(OPTION_VALUES)) {
    if (random() < 0.6) continue;
    const [value, ok] = pick(random, values);
    options[name] = value;
    valid &&= ok;
  }
  return { options, expected: valid ? 'ok' : 'options' };
}

/** `count` random keys, then `count / 2` random options on plain keys, from one seed. */
export function randomCases(seed: number, count: number): InputCase[] {
  const random = seededRandom(seed);
  const cases: InputCase[] = [];
  for (let i = 0; i < count; i++) {
    const key = randomKey(random);
    const name = `seed ${seed} key #${i} ${JSON.stringify(key.slice(0, 40))}`;
    cases.push({ name, key, expected: expectedForKey(key) });
  }
  for (let i = 0; i < count / 2; i++) {
    const { options, expected } = randomOptions(random);
    const name = `seed ${seed} options #${i} ${shown(options)}`;
    cases.push({ name, key: `opt:${i}`, options, expected });
  }
  return cases;
}

/** Options as a failure message shows them; JSON would print NaN and Infinity as null. */
function shown(options: object): string {
  const fields = Object.entries(options).map(
    ([name, value]) => `${name}: ${typeof value === 'string' ? `'${value}'` : String(value)}`,
  );
  return `{ ${fields.join(', ')} }`;
}
