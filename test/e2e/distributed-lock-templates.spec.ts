import request from 'supertest';
import { DistributedLock, LockKeyError, type LockKeySource } from '../../lib/index.js';
import { scanKeys } from '../harness/scan-keys.js';
import { PLATFORMS } from '../fixtures/decorator-app/http-app.js';
import { useDecoratorApp } from '../harness/decorator-app.js';

/** Defines a class whose method is locked on `key`: malformed templates must fail right here. */
function defineCartService(key: LockKeySource) {
  class CartService {
    @DistributedLock(key)
    checkout(_cart: unknown) {
      return 'checked out';
    }
  }
  return CartService;
}

function definitionError(key: LockKeySource): Error {
  try {
    defineCartService(key);
  } catch (error) {
    return error as Error;
  }
  throw new Error(`defining a class locked on ${JSON.stringify(key)} did not throw`);
}

/** Checkout bodies whose lock key cannot be built: [case, body, placeholder, how it is shown]. */
const BAD_CHECKOUTS: [string, object, string, string][] = [
  ['no user', { cart: 'c1' }, '{0.user.id}', 'missing'],
  ['no user id', { user: {}, cart: 'c1' }, '{0.user.id}', 'missing'],
  ['a null user id', { user: { id: null }, cart: 'c1' }, '{0.user.id}', 'null'],
  ['an object user id', { user: { id: { n: 1 } }, cart: 'c1' }, '{0.user.id}', 'object'],
  ['an array user id', { user: { id: [1] }, cart: 'c1' }, '{0.user.id}', 'an array'],
  ['no cart', { user: { id: 7 } }, '{0.cart}', 'missing'],
  ['an empty cart', { user: { id: 7 }, cart: '' }, '{0.cart}', 'an empty string'],
];

describe('a malformed key template', () => {
  it.each(['seckill:{0', 'a:{x}', 'a}', 'a:{}', 'a:{0.}', ['ok:{0}', 'bad:{1']])(
    'fails when the decorator is applied: %j',
    (key) => {
      const error = definitionError(key);

      expect(error).toBeInstanceOf(LockKeyError);
      expect(error.message).toContain('@DistributedLock on CartService.checkout');
      expect(error.message).toContain('bad lock key template');
    },
  );

  it('lets a well-formed template through', () => {
    expect(() => defineCartService('cart:{0.id}:{{tag}}')).not.toThrow();
  });
});

describe.each(PLATFORMS)('key templates over HTTP (%s)', (platform) => {
  const fixture = useDecoratorApp(platform);

  it('locks on the values the template picks out of the arguments', async () => {
    const checkout = await request(fixture.url)
      .post('/templates/checkout')
      .send({ user: { id: 7 }, cart: 'c1' });
    const number = await request(fixture.url).post('/templates/number').query({ n: '5' });
    const hashTag = await request(fixture.url).post('/templates/hash-tag').query({ sku: '42' });

    expect(checkout.status).toBe(201);
    expect(checkout.body).toEqual({ key: 'cart:7:c1', fence: expect.any(Number) });
    expect(number.body).toEqual({ n: 5, key: 'number:5' });
    expect(hashTag.body).toEqual({ sku: '42', key: '{stock}:42' });
  });

  it.each(BAD_CHECKOUTS)(
    'answers 400 naming the placeholder for %s, without running the method',
    async (_, body, placeholder, shown) => {
      const before = fixture.probe.notesOf('checkout').length;

      const response = await request(fixture.url).post('/templates/checkout').send(body);

      expect(response.status).toBe(400);
      expect(response.body.statusCode).toBe(400);
      expect(response.body.message).toContain(`needs a value (${placeholder}), but it is`);
      expect(response.body.message).toContain(shown);
      // The client is told what is missing, never which class and method took the lock.
      expect(response.text).not.toContain('KeyTemplatesController');
      expect(fixture.probe.notesOf('checkout')).toHaveLength(before);
    },
  );

  it.each([
    ['not a number', { n: 'abc' }],
    ['missing', {}],
  ])('answers 400 for a number argument that is %s (NaN)', async (_, query) => {
    const before = fixture.probe.notesOf('number').length;

    const response = await request(fixture.url).post('/templates/number').query(query);

    expect(response.status).toBe(400);
    expect(response.body.message).toContain('needs a value ({0}), but it is NaN');
    expect(fixture.probe.notesOf('number')).toHaveLength(before);
  });

  it('leaves no key built from undefined, null, NaN or an object in Redis', async () => {
    const app = request(fixture.url);
    for (const [, body] of BAD_CHECKOUTS) await app.post('/templates/checkout').send(body);
    await app.post('/templates/number').query({ n: 'abc' });
    await app.post('/templates/checkout').send({ user: { id: 8 }, cart: 'c2' });
    await app.post('/templates/number').query({ n: '6' });

    const keys = await scanKeys(fixture.client);

    // Fence counters outlive their locks: one per key that was ever locked. The good requests
    // left theirs, which shows the scan does see what the app wrote.
    expect(keys).toEqual(
      expect.arrayContaining(['{lock:cart:8:c2}\x1ffence', '{lock:number:6}\x1ffence']),
    );
    expect(keys.filter((key) => /undefined|null|NaN|\[object/.test(key))).toEqual([]);
  });
});
