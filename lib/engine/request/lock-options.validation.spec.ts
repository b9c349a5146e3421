import { LockOptionsError } from '../../errors/lock.errors.js';
import {
  MAX_TTL,
  describe as describeValue,
  validateLockOptions,
} from './lock-options.validation.js';

function validate(options: unknown, extraNames?: ReadonlySet<string>): void {
  validateLockOptions(options, 'Lock "k"', extraNames);
}

function rejection(options: unknown): LockOptionsError {
  try {
    validate(options);
  } catch (error) {
    if (error instanceof LockOptionsError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(options)} to be rejected`);
}

describe('validateLockOptions', () => {
  it('accepts no options and every valid option', () => {
    expect(() => validate(undefined)).not.toThrow();
    expect(() => validate({})).not.toThrow();
    expect(() =>
      validate({
        ttl: 1,
        wait: 0,
        autoRenew: false,
        maxHold: 60_000,
        fencing: true,
        signal: new AbortController().signal,
      }),
    ).not.toThrow();
  });

  it.each([null, 'ttl=5', 5, true, [{ ttl: 5 }]])('rejects %p as the options', (options) => {
    expect(rejection(options).message).toMatch(/lock options must be an object/);
  });

  it.each([
    ['a Map', new Map([['ttl', 5]])],
    ['a Date', new Date()],
    ['a Set', new Set()],
    ['a RegExp', /ttl/],
  ])('rejects %s, which would otherwise be read as no options at all', (name, options) => {
    expect(rejection(options).message).toBe(
      `Lock "k": lock options must be a plain object, got ${name}.`,
    );
  });

  it('accepts an object without a prototype and a class instance', () => {
    const bare = Object.assign(Object.create(null) as object, { ttl: 5 });
    class Options {
      ttl = 5;
    }
    expect(() => validate(bare)).not.toThrow();
    expect(() => validate(new Options())).not.toThrow();
  });

  it('rejects an unknown option, naming it and the known ones, so a typo cannot fall back to a default', () => {
    const error = rejection({ tll: 5_000 });

    expect(error.message).toContain('unknown lock option "tll"');
    expect(error.message).toContain('ttl, wait');
    expect(error.code).toBe('LOCK_OPTIONS_INVALID');
    expect(error.statusCode).toBe(500);
  });

  it('accepts the extra names a caller allows', () => {
    expect(() => validate({ key: 'k' }, new Set(['key']))).not.toThrow();
    expect(() => validate({ key: 'k' })).toThrow(LockOptionsError);
  });

  describe('ttl', () => {
    it.each([1, 30_000, MAX_TTL])('accepts %p', (ttl) => {
      expect(() => validate({ ttl })).not.toThrow();
    });

    it.each([0, -1, 1.5, Number.NaN, Infinity, MAX_TTL + 1, '1000', null])('rejects %p', (ttl) => {
      expect(rejection({ ttl }).message).toMatch(
        /"ttl" must be an integer number of ms from 1 to 2147483647/,
      );
    });
  });

  describe('wait', () => {
    it.each([0, 1, 2.5, Infinity])('accepts %p', (wait) => {
      expect(() => validate({ wait })).not.toThrow();
    });

    it.each([-1, -Infinity, Number.NaN, '100', null])('rejects %p', (wait) => {
      expect(rejection({ wait }).message).toMatch(/"wait" must be a number of ms/);
    });
  });

  describe('maxHold', () => {
    it.each([0, -5, 1.5, Number.NaN, Infinity, '100'])('rejects %p', (maxHold) => {
      expect(rejection({ maxHold }).message).toMatch(/"maxHold" must be a positive integer/);
    });
  });

  it.each([
    ['autoRenew', 'yes'],
    ['autoRenew', 1],
    ['fencing', 'true'],
    ['fencing', 0],
  ])('rejects a non-boolean %s (%p)', (name, value) => {
    expect(rejection({ [name]: value }).message).toContain(`"${name}" must be a boolean`);
  });

  it('rejects a signal that is not an AbortSignal', () => {
    expect(rejection({ signal: { aborted: false } }).message).toContain(
      '"signal" must be an AbortSignal',
    );
  });

  it('says where the bad options came from', () => {
    expect(() => validateLockOptions({ ttl: 0 }, 'LockModule "defaults"')).toThrow(
      /^LockModule "defaults": /,
    );
  });
});

describe('describe (for error messages)', () => {
  it.each<[unknown, string]>([
    ['abc', '"abc"'],
    ['x'.repeat(50), `"${'x'.repeat(40)}…"`],
    [5, '5'],
    [Number.NaN, 'NaN'],
    [null, 'null'],
    [undefined, 'undefined'],
    [10n, '10n'],
    [[1], 'an array'],
    [() => 1, 'a function'],
  ])('shows %p as %s', (value, shown) => {
    expect(describeValue(value)).toBe(shown);
  });

  it('names the type of an object without printing it', () => {
    expect(describeValue({ password: 'secret' })).toMatch(/^an? object$/);
  });
});
