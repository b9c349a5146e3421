import type { Lock } from '../../lib/engine/lock.interface.js';

/**
 * Inputs an app may hand the lock by mistake (an unset config value, a number where a name was
 * meant, text pasted from a spreadsheet), each with the outcome the library promises: a typed
 * error before anything reaches Redis, or, for odd but valid input, a plain lock.
 */
export type Expected = 'key' | 'options' | 'ok';

export interface InputCase {
  readonly name: string;
  readonly key: unknown;
  readonly options?: unknown;
  readonly expected: Expected;
}

const badKey = (name: string, key: unknown): InputCase => ({ name, key, expected: 'key' });
const badOptions = (name: string, options: unknown): InputCase => ({
  name,
  key: 'k',
  options,
  expected: 'options',
});
const fine = (name: string, key: unknown, options?: unknown): InputCase => ({
  name,
  key,
  options,
  expected: 'ok',
});

export const NAMED_CASES: readonly InputCase[] = [
  badKey('empty', ''),
  badKey('a space', ' '),
  badKey('a tab', '\t'),
  badKey('a newline', '\n'),
  badKey('a no-break space', '\u00a0'),
  badKey('an ideographic space', '\u3000'),
  badKey('a line separator', '\u2028'),
  badKey('a byte-order mark', '\ufeff'),
  badKey('mixed blanks', ' \t\u00a0\u3000 '),
  badKey('null', null),
  badKey('undefined', undefined),
  badKey('42', 42),
  badKey('NaN', NaN),
  badKey('true', true),
  badKey('{}', {}),
  badKey('an object with toString', { toString: () => 'k' }),
  badKey('a String object', new String('k')),
  badKey('a Date', new Date(0)),
  badKey('[]', []),
  badKey("['']", ['']),
  badKey("['a', '']", ['a', '']),
  badKey("['a', 5]", ['a', 5]),
  badKey("['a', null]", ['a', null]),
  badKey("[['a']]", [['a']]),
  badKey("['a', NUL]", ['a', '\u0000']),
  badKey("['a', 1025 bytes]", ['a', 'k'.repeat(1025)]),
  badKey('1025 ASCII bytes', 'k'.repeat(1025)),
  badKey("342 '€' (1026 bytes)", '€'.repeat(342)),
  badKey('257 emoji (1028 bytes)', '😀'.repeat(257)),
  badKey('NUL', '\u0000'),
  badKey('a NUL inside', 'a\u0000b'),
  badKey('BEL', '\u0007'),
  badKey('an escape sequence', '\u001b[2J'),
  badKey('DEL', '\u007f'),
  badKey('NEL (C1)', '\u0085'),
  badKey('APC (C1, last)', '\u009f'),
  badKey('a lone high surrogate', '\ud800'),
  badKey('a lone low surrogate inside', 'a\udc00b'),
  badKey('half an emoji', '😀'.slice(0, 1) + 'x'),
  badKey('a newline inside', 'a\nb'),
  badKey('a carriage return inside', 'a\rb'),
  badKey('a Symbol', Symbol('k')),
  badKey('a function', () => 'k'),
  badKey('a BigInt', 10n),
  badOptions('ttl 0', { ttl: 0 }),
  badOptions('ttl -1', { ttl: -1 }),
  badOptions('ttl 1.5', { ttl: 1.5 }),
  badOptions('ttl NaN', { ttl: NaN }),
  badOptions('ttl Infinity', { ttl: Infinity }),
  badOptions('ttl 2**31', { ttl: 2 ** 31 }),
  badOptions("ttl '100'", { ttl: '100' }),
  badOptions('ttl null', { ttl: null }),
  badOptions('ttl true', { ttl: true }),
  badOptions('ttl 10n', { ttl: 10n }),
  badOptions('wait -1', { wait: -1 }),
  badOptions('wait NaN', { wait: NaN }),
  badOptions("wait '5'", { wait: '5' }),
  badOptions('wait -Infinity', { wait: -Infinity }),
  badOptions('maxHold 0', { maxHold: 0 }),
  badOptions('maxHold 1.5', { maxHold: 1.5 }),
  badOptions('maxHold Infinity', { maxHold: Infinity }),
  badOptions("autoRenew 'yes'", { autoRenew: 'yes' }),
  badOptions('autoRenew 1', { autoRenew: 1 }),
  badOptions('fencing 1', { fencing: 1 }),
  badOptions("fencing 'true'", { fencing: 'true' }),
  badOptions('signal {}', { signal: {} }),
  badOptions("signal 'abort'", { signal: 'abort' }),
  badOptions('unknown option tll', { tll: 1000 }),
  badOptions('unknown option timeout', { timeout: 1000 }),
  badOptions('TTL in capitals', { TTL: 1000 }),
  badOptions('options null', null),
  badOptions('options []', []),
  badOptions("options 'fast'", 'fast'),
  badOptions('options 1000 (a ttl passed bare)', 1000),
  badOptions('options a function', () => ({ ttl: 1000 })),
  badOptions('options true', true),
  fine('1024 ASCII bytes', 'k'.repeat(1024)),
  fine("341 '€' (1023 bytes)", '€'.repeat(341)),
  fine('256 emoji (1024 bytes)', '😀'.repeat(256)),
  fine('a zero-width space (not white space)', '\u200b'),
  fine('spaces around a name', ' a '),
  fine('a line separator inside', 'a\u2028b'),
  fine('glob and hash-tag characters', '*?[]{}\\'),
  fine('the prefix again', 'lock:lock:'),
  fine('duplicate keys', ['dup', 'dup']),
  fine('three keys', ['x', 'y', 'z']),
  fine('empty options', 'k', {}),
  fine('options without a prototype', 'k', Object.create(null)),
  fine('undefined values', 'k', { ttl: undefined, wait: undefined }),
  fine('the longest ttl', 'k', { ttl: 2 ** 31 - 1 }),
  fine('wait Infinity', 'k', { wait: Infinity }),
  fine('wait -0', 'k', { wait: -0 }),
  fine('fencing, no renewal', 'k', { fencing: true, autoRenew: false }),
  fine('a live signal', 'k', { signal: new AbortController().signal }),
];

/** The three ways in, typed loosely: bad inputs are what TypeScript would have refused. */
export interface Locker {
  acquire(key: unknown, options?: unknown): Promise<Lock>;
  tryAcquire(key: unknown, options?: unknown): Promise<Lock | undefined>;
  withLock(key: unknown, fn: (lock: Lock) => unknown, options?: unknown): Promise<unknown>;
}

/** The engine or `LockService`: both take locks the way users do. */
type Locks = {
  acquire(key: string, options?: object): Promise<Lock>;
  tryAcquire(key: string, options?: object): Promise<Lock | undefined>;
  withLock(key: string, fn: (lock: Lock) => unknown, options?: object): Promise<unknown>;
};

/** `locks` as a `Locker`: each input is handed on unchecked, as JavaScript callers would. */
export function untyped(locks: Locks): Locker {
  return {
    acquire: (key, options) => locks.acquire(key as never, options as never),
    tryAcquire: (key, options) => locks.tryAcquire(key as never, options as never),
    withLock: (key, fn, options) => locks.withLock(key as never, fn, options as never),
  };
}
