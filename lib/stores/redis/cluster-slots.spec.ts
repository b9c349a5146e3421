import { LockKeyError, LockOptionsError } from '../../errors/lock.errors.js';
import { createLockEngine } from '../../nest/lock-engine.factory.js';
import { MemoryLockStore } from '../memory/memory-lock.store.js';
import { validateLockKeys } from '../../engine/request/lock-request.js';
import {
  COMPANION_SEPARATOR,
  companionKey,
  fenceKeyOf,
  hashTagOf,
  type CompanionName,
} from './redis-commands.js';
import { checkClusterKeys, clusterSlot } from './cluster-slots.js';

const NAMES: readonly CompanionName[] = ['fence', 'turns', 'writer', 'released', 'writes'];
const PREFIXES = ['lock:', '', '{app}:', 'a{b', 'x}'];

/**
 * Names a user's input may put braces, colons and companion names into, and each pasted onto
 * itself with a companion's old and new suffixes: `{stock}:42:fence`, `{stock}:42␟fence`...
 */
function nastyNames(): string[] {
  const pieces = ['{stock}:42', '{a}', 'a', '{', '}', '{}', ':', 'x}y', 'a{b', '{{x}}', 'ключ'];
  const suffixes = ['', ...NAMES.map((name) => `:${name}`), ...NAMES.map((name) => `}:${name}`)];
  const names = pieces.flatMap((piece) => suffixes.map((suffix) => piece + suffix));
  return [...names, ...names.map((name) => `{${name}}`), ...names.map((name) => `x:{${name}}:y`)];
}

/** Every full lock key the engine would send for those names: prefix + name, if valid. */
function lockKeys(): string[] {
  const keys = new Set<string>();
  for (const prefix of PREFIXES) {
    for (const name of nastyNames()) {
      try {
        validateLockKeys(name);
        keys.add(prefix + name);
      } catch {
        // Refused before any store call: never a lock key.
      }
    }
  }
  return [...keys];
}

/** The pairs (lock key, companion) whose companion is also a lock key of `keys`. */
function collisions(keys: readonly string[], name: (key: string, n: CompanionName) => string) {
  const all = new Set(keys);
  return keys.flatMap((key) =>
    NAMES.map((n) => [key, name(key, n)]).filter(([, companion]) => all.has(companion)),
  );
}

describe('companion keys: a namespace no lock key can reach', () => {
  const keys = lockKeys();

  it('has hundreds of nasty lock keys to check', () => {
    expect(keys.length).toBeGreaterThan(500);
    expect(keys).toEqual(
      expect.arrayContaining(['lock:{stock}:42', 'lock:{stock}:42:fence', '{a}', 'a']),
    );
  });

  it('no companion of any of them is a lock key: each carries a character key validation refuses', () => {
    expect(collisions(keys, companionKey)).toEqual([]);
    const reachable = keys.flatMap((key) =>
      NAMES.map((name) => companionKey(key, name)).filter((companion) => {
        try {
          validateLockKeys(companion);
          return true;
        } catch (error) {
          return !(error instanceof LockKeyError) || !companion.includes(COMPANION_SEPARATOR);
        }
      }),
    );
    expect(reachable).toEqual([]);
  });

  it('no two lock keys share a companion, `a` and `{a}` included', () => {
    const companions = keys.flatMap((key) => NAMES.map((name) => companionKey(key, name)));
    expect(new Set(companions).size).toBe(companions.length);
    expect(companionKey('a', 'fence')).not.toBe(companionKey('{a}', 'fence'));
  });

  it('keeps every companion in the slot of each lock key a Cluster store accepts', () => {
    const accepted = keys.filter((key) => {
      try {
        checkClusterKeys([key]);
        return true;
      } catch {
        return false; // braces that are not a hash tag: refused on a Cluster
      }
    });
    expect(accepted.length).toBeGreaterThan(keys.length / 2);
    for (const key of accepted) {
      for (const name of NAMES) expect(clusterSlot(companionKey(key, name))).toBe(clusterSlot(key));
    }
  });

  it('refuses the separator in a key name and in the key prefix, before any store call', () => {
    expect(() => validateLockKeys(`order${COMPANION_SEPARATOR}fence`)).toThrow(LockKeyError);
    const store = new MemoryLockStore();
    expect(() => createLockEngine({ store, keyPrefix: `lock${COMPANION_SEPARATOR}` })).toThrow(
      LockOptionsError,
    );
  });

  // Canary: the same check on the old layout, `<key>:fence` or `{<key>}:fence`, finds the
  // collisions the defect report saw.
  it('canary: the old layout names companions that are lock keys', () => {
    const old = (key: string, name: CompanionName): string =>
      companionKey(key, name).split(COMPANION_SEPARATOR).filter(Boolean).join(':');
    const found = collisions(keys, old);
    expect(found).toEqual(
      expect.arrayContaining([
        ['lock:{stock}:42', 'lock:{stock}:42:fence'],
        ['lock:{stock}:42', 'lock:{stock}:42:turns'],
        ['lock:{stock}:42', 'lock:{stock}:42:writer'],
      ]),
    );
    // ...and lock keys that share their companions: `a` and `{a}` without a prefix.
    expect(old('a', 'fence')).toBe(old('{a}', 'fence'));
  });
});

describe('clusterSlot', () => {
  it.each([
    ['foo', 12182],
    ['123456789', 12739],
    ['{user1000}.following', 3443],
    ['{user1000}.followers', 3443],
  ])('hashes %s to slot %i like Redis does', (key, slot) => {
    expect(clusterSlot(key)).toBe(slot);
  });

  it('hashes only the first non-empty hash tag', () => {
    expect(hashTagOf('a{b}c{d}')).toBe('b');
    expect(hashTagOf('a{}b')).toBe('a{}b');
    expect(hashTagOf('a{b')).toBe('a{b');
  });
});

describe('companion keys', () => {
  it.each(['lock:a', 'lock:{order:1}:x', 'lock:{a}{b}', 'lock:a{b'])(
    'keeps %s and its fence counter in one slot',
    (key) => {
      expect(clusterSlot(fenceKeyOf(key))).toBe(clusterSlot(key));
    },
  );

  it.each(['lock:a{}b', 'x}y'])(
    'cannot pair %s (stray braces) with a same-slot companion',
    (key) => {
      expect(clusterSlot(fenceKeyOf(key))).not.toBe(clusterSlot(key));
    },
  );

  it('wraps a key without a hash tag, so the lock key itself stays as given', () => {
    expect(companionKey('lock:a', 'fence')).toBe('{lock:a}\x1ffence');
    expect(companionKey('lock:{t}:a', 'fence')).toBe('lock:{t}:a\x1f\x1ffence');
  });
});
