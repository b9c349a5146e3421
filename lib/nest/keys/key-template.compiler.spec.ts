import { LockKeyError } from '../../errors/lock.errors.js';
import { compileKeyTemplate } from './key-template.compiler.js';
import { compileLockKey } from './lock-key.resolver.js';

const WHERE = '@DistributedLock on OrdersService.pay';
const METHOD = 'OrdersService.pay';

/** The key `template` gives for `args`. */
function keyOf(template: string, ...args: unknown[]): string {
  return compileKeyTemplate(template, WHERE)(args, METHOD);
}

/** The error a call throws; fails the test if it does not throw. */
function thrownBy(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

describe('compileKeyTemplate', () => {
  describe('builds keys', () => {
    it.each([
      ['a literal template as is', 'stock:all', [], 'stock:all'],
      ['an argument', 'order:{0}', ['42'], 'order:42'],
      ['a later argument', 'order:{1}', ['ignored', 'x'], 'order:x'],
      ['several placeholders', '{1}:{0}', ['a', 'b'], 'b:a'],
      ['the same argument twice', '{0}-{0}', ['a'], 'a-a'],
      ['a number', 'n:{0}', [7], 'n:7'],
      ['zero', 'n:{0}', [0], 'n:0'],
      ['a negative fraction', 'n:{0}', [-1.5], 'n:-1.5'],
      ['a bigint', 'n:{0}', [12345678901234567890n], 'n:12345678901234567890'],
      ['a boolean', 'flag:{0}', [false], 'flag:false'],
      ['a property path', 'user:{0.user.id}', [{ user: { id: 9 } }], 'user:9'],
      ['a path with _ and $', '{0.$meta.tenant_id}', [{ $meta: { tenant_id: 't1' } }], 't1'],
      ['an array element by index', 'item:{0.0}', [['first']], 'item:first'],
    ])('with %s', (_, template, args, key) => {
      expect(keyOf(template, ...args)).toBe(key);
    });
  });

  describe('escapes braces', () => {
    it.each([
      ['{{ and }} as literal braces', '{{stock}}:{0}', ['42'], '{stock}:42'],
      ['a placeholder inside literal braces', '{{{0}}}', ['42'], '{42}'],
      ['an escaped placeholder as text', '{{0}}', ['42'], '{0}'],
      ['a lone escaped closing brace', 'a}}b', [], 'a}b'],
    ])('reads %s', (_, template, args, key) => {
      expect(keyOf(template, ...args)).toBe(key);
    });
  });

  describe('rejects a malformed template when compiled', () => {
    it.each([
      ['seckill:{0', 'never closed'],
      ['a:{x}', '"{x}" is not a placeholder'],
      ['a}', 'lone "}"'],
      ['a:{}', '"{}" is not a placeholder'],
      ['a:{0.}', '"{0.}" is not a placeholder'],
      ['a:{0..b}', '"{0..b}" is not a placeholder'],
      ['a:{-1}', '"{-1}" is not a placeholder'],
      ['a:{ 0 }', '"{ 0 }" is not a placeholder'],
      ['a:{0.user-id}', '"{0.user-id}" is not a placeholder'],
      ['{{0}', 'lone "}"'],
      ['   ', 'only white space'],
      ['\u3000', 'only white space'],
      ['x:\t', 'control character'],
      ['x:{0}\n', 'control character'],
      ['x'.repeat(1025) + ':{0}', 'longer than 1024 bytes'],
    ])('%j', (template, problem) => {
      const error = thrownBy(() => compileKeyTemplate(template, WHERE));

      expect(error).toBeInstanceOf(LockKeyError);
      expect(error.message).toContain(WHERE);
      expect(error.message).toContain(`"${template}"`);
      expect(error.message).toContain(problem);
    });
  });

  describe('rejects a value that cannot be part of a key when called', () => {
    it.each([
      ['a missing argument', 'order:{0}', [], 'missing'],
      ['undefined', 'order:{0}', [undefined], 'missing'],
      ['null', 'order:{0}', [null], 'null'],
      ['NaN', 'order:{0}', [NaN], 'NaN'],
      ['Infinity', 'order:{0}', [Infinity], 'Infinity'],
      ['an empty string', 'order:{0}', [''], 'an empty string'],
      ['a string of spaces', 'order:{0}', ['  '], 'only white space'],
      ['a tab', 'order:{0}', ['\t'], 'only white space'],
      ['an object', 'order:{0}', [{ id: 1 }], 'object'],
      ['an array', 'order:{0}', [[1, 2]], 'an array'],
      ['a function', 'order:{0}', [() => 1], 'function'],
      ['a symbol', 'order:{0}', [Symbol('s')], 'symbol'],
      ['a missing property', 'user:{0.user.id}', [{ user: {} }], 'missing'],
      ['a null on the path', 'user:{0.user.id}', [{ user: null }], 'missing'],
      ['a path into a string', 'user:{0.user.id}', [{ user: 'u1' }], 'missing'],
      ['a null property', 'user:{0.user.id}', [{ user: { id: null } }], 'null'],
      ['an object property', 'user:{0.user}', [{ user: { id: 1 } }], 'object'],
    ])('%s', (_, template, args, shown) => {
      const placeholder = /\{[^}]+\}/.exec(template)![0];

      const error = thrownBy(() => keyOf(template, ...args));

      expect(error).toBeInstanceOf(LockKeyError);
      expect(error.message).toContain(METHOD);
      expect(error.message).toContain(`needs ${placeholder}, but it is`);
      expect(error.message).toContain(shown);
    });

    it('never builds a key of "undefined", "null", "NaN" or "[object"', () => {
      const build = compileKeyTemplate('k:{0}:{1.a}', WHERE);
      const bad = [undefined, null, NaN, {}, [], '', { a: undefined }];
      const built: string[] = [];
      for (const first of bad) {
        for (const second of bad) {
          try {
            built.push(build([first, second], METHOD));
          } catch (error) {
            expect(error).toBeInstanceOf(LockKeyError);
          }
        }
      }
      expect(built).toEqual([]);
    });
  });
});

describe('compileLockKey', () => {
  it('builds every key of an array of templates', () => {
    const resolve = compileLockKey(['stock:{0}', 'wallet:{1.id}'], WHERE);

    expect(resolve(['s1', { id: 'w1' }], METHOD)).toEqual(['stock:s1', 'wallet:w1']);
  });

  it('rejects a malformed template anywhere in an array when compiled', () => {
    expect(() => compileLockKey(['stock:{0}', 'wallet:{1'], WHERE)).toThrow(LockKeyError);
  });

  it("calls a key function with the method's arguments", () => {
    const resolve = compileLockKey((id: string, qty: number) => `stock:${id}:${qty}`, WHERE);

    expect(resolve(['s1', 3], METHOD)).toBe('stock:s1:3');
  });

  it.each([
    ['an empty array', []],
    ['an array with a non-string', ['a', 1]],
    ['a number', 42],
    ['null', null],
  ])('rejects %s as the key source', (_, source) => {
    const error = thrownBy(() => compileLockKey(source as never, WHERE));

    expect(error).toBeInstanceOf(LockKeyError);
    expect(error.message).toContain(WHERE);
  });
});
