import { LockKeyError, LockOptionsError } from '../../errors/lock.errors.js';
import {
  MAX_KEY_BYTES,
  MAX_KEYS_PER_LOCK,
  newLockToken,
  PROCESS_ID,
  resolveLockOptions,
  validateLockKeys,
} from './lock-request.js';
import { DEFAULT_LOCK_OPTIONS } from './lock-options.validation.js';
import { processIdOf, tokenCheckOf } from '../../stores/lock-inspection.interface.js';

function rejection(key: unknown): LockKeyError {
  try {
    validateLockKeys(key);
  } catch (error) {
    if (error instanceof LockKeyError) return error;
    throw error;
  }
  throw new Error(`expected ${String(key)} to be rejected`);
}

describe('validateLockKeys', () => {
  it('returns a single key as a one-element list', () => {
    expect(validateLockKeys('orders:42')).toEqual(['orders:42']);
  });

  it('accepts printable Unicode, spaces and Redis hash tags', () => {
    expect(validateLockKeys('{tenant-1} rapport é ✓')).toEqual(['{tenant-1} rapport é ✓']);
  });

  it('keeps the order of a multi-key lock (the first key gives `lock.fence`) and drops duplicates', () => {
    expect(validateLockKeys(['c', 'a', 'b', 'a'])).toEqual(['c', 'a', 'b']);
  });

  it('rejects an empty key with a 400 error', () => {
    const error = rejection('');

    expect(error.message).toMatch(/must not be empty/);
    expect(error.statusCode).toBe(400);
    expect(error.code).toBe('LOCK_KEY_INVALID');
  });

  it.each([' ', '   ', '\u00a0', '\u2003 ', '\u3000'])(
    'rejects a key of white space only (%j), as an empty template value would give',
    (key) => {
      expect(rejection(key).message).toMatch(/must not be empty or only white space/);
    },
  );

  it('accepts white space around a name', () => {
    expect(validateLockKeys(' orders 42 ')).toEqual([' orders 42 ']);
  });

  it.each([undefined, null, 42, true, { id: 1 }, Symbol('k')])(
    'rejects a non-string key (%p)',
    (key) => {
      expect(rejection(key).message).toMatch(/must be a string/);
    },
  );

  describe('length, in UTF-8 bytes', () => {
    it('accepts exactly 1 KiB', () => {
      expect(() => validateLockKeys('k'.repeat(MAX_KEY_BYTES))).not.toThrow();
    });

    it('rejects one byte more', () => {
      expect(rejection('k'.repeat(MAX_KEY_BYTES + 1)).message).toMatch(/longer than 1024 bytes/);
    });

    it('counts bytes, not characters', () => {
      // 342 three-byte characters: 1026 bytes in fewer than 1024 characters.
      const key = '€'.repeat(342);
      expect(key.length).toBeLessThan(MAX_KEY_BYTES);

      expect(rejection(key).message).toMatch(/longer than 1024 bytes/);
    });

    it('keeps the error small: its key is cut short', () => {
      expect(rejection('k'.repeat(5_000)).key).toHaveLength(40);
    });
  });

  it.each([
    ['NUL', 'a\u0000b'],
    ['newline', 'a\nb'],
    ['carriage return', 'a\rb'],
    ['tab', 'a\tb'],
    ['escape', '\u001b[31mred'],
    ['DEL', 'a\u007f'],
  ])('rejects a key with a control character (%s)', (_name, key) => {
    expect(rejection(key).message).toMatch(/control character/);
  });

  describe('multi-key locks', () => {
    it('rejects an empty list', () => {
      expect(rejection([]).message).toMatch(/at least one key/);
    });

    it.each([
      ['an empty key', ['a', '']],
      ['a non-string key', ['a', 7]],
      ['a control character', ['a', 'b\n']],
      ['an over-long key', ['a', 'k'.repeat(MAX_KEY_BYTES + 1)]],
    ])('rejects the whole list for %s', (_name, keys) => {
      expect(() => validateLockKeys(keys)).toThrow(LockKeyError);
    });

    const keys = (count: number): string[] => Array.from({ length: count }, (_, i) => `k${i}`);

    it('accepts MAX_KEYS_PER_LOCK keys', () => {
      expect(validateLockKeys(keys(MAX_KEYS_PER_LOCK))).toHaveLength(MAX_KEYS_PER_LOCK);
    });

    it('refuses one key more with LockOptionsError, naming the limit', () => {
      const refuse = (): unknown => validateLockKeys(keys(MAX_KEYS_PER_LOCK + 1));

      expect(refuse).toThrow(LockOptionsError);
      expect(refuse).toThrow(
        `at most ${MAX_KEYS_PER_LOCK} keys (MAX_KEYS_PER_LOCK), got ${MAX_KEYS_PER_LOCK + 1}`,
      );
    });

    it('counts distinct keys: duplicates cost Redis nothing', () => {
      const list = [...keys(MAX_KEYS_PER_LOCK), ...keys(MAX_KEYS_PER_LOCK)];
      expect(validateLockKeys(list)).toHaveLength(MAX_KEYS_PER_LOCK);
    });
  });
});

describe('newLockToken', () => {
  it('makes 30-character base64url tokens, all different, across many batches', () => {
    const tokens = Array.from({ length: 10_000 }, () => newLockToken());

    expect(tokens.filter((token) => !/^[A-Za-z0-9_-]{30}$/.test(token))).toEqual([]);
    expect(new Set(tokens).size).toBe(tokens.length);
  });

  it("begins every token with the process's id, then 84 random bits, and ends with its check", () => {
    const tokens = Array.from({ length: 600 }, () => newLockToken());
    expect(PROCESS_ID).toMatch(/^[A-Za-z0-9_-]{8}$/);
    expect(tokens.filter((token) => processIdOf(token) !== PROCESS_ID)).toEqual([]);
    const check = tokenCheckOf(PROCESS_ID);
    expect(check).toMatch(/^[0-9a-f]{8}$/);
    expect(tokens.filter((token) => !token.endsWith(check))).toEqual([]);
    // 14 base64url characters: 84 bits. Every character of the random part varies.
    const randomParts = tokens.map((token) => token.slice(PROCESS_ID.length, -check.length));
    expect(randomParts.every((part) => part.length === 14)).toBe(true);
    for (let i = 0; i < 14; i++) {
      expect(new Set(randomParts.map((part) => part[i])).size).toBeGreaterThan(32);
    }
  });

  it('draws fresh random bytes for each batch: no token repeats a later batch', () => {
    // 256 tokens per batch; a repeated pool would give the same sequence again.
    const first = Array.from({ length: 256 }, () => newLockToken());
    const second = Array.from({ length: 256 }, () => newLockToken());

    expect(second.filter((token) => first.includes(token))).toEqual([]);
  });
});

describe('resolveLockOptions', () => {
  it('returns the defaults themselves when no options are given', () => {
    expect(resolveLockOptions(DEFAULT_LOCK_OPTIONS, undefined)).toBe(DEFAULT_LOCK_OPTIONS);
  });

  it('lets given options override the defaults, but not undefined ones', () => {
    const resolved = resolveLockOptions(DEFAULT_LOCK_OPTIONS, {
      ttl: 500,
      wait: undefined,
      fencing: true,
    });

    expect(resolved).toEqual({ ttl: 500, wait: 10_000, autoRenew: true, fencing: true });
  });

  it('leaves the defaults untouched', () => {
    resolveLockOptions(DEFAULT_LOCK_OPTIONS, { ttl: 500 });

    expect(DEFAULT_LOCK_OPTIONS).toEqual({
      ttl: 30_000,
      wait: 10_000,
      autoRenew: true,
      fencing: false,
    });
  });
});
