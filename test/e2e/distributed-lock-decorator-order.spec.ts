import { Reflector } from '@nestjs/core';
import {
  GUARDS_METADATA,
  HTTP_CODE_METADATA,
  INTERCEPTORS_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
} from '@nestjs/common/constants.js';
import request from 'supertest';
import { DecoratorOrderController } from '../fixtures/decorator-app/decorator-order.controller.js';
import { EnvelopeInterceptor, TokenGuard } from '../fixtures/decorator-app/enhancers.js';
import { gate } from '../fixtures/decorator-app/hold-policies.js';
import { PLATFORMS } from '../fixtures/decorator-app/http-app.js';
import { useDecoratorApp } from '../harness/decorator-app.js';
import { post } from '../harness/http-post.js';

describe('@DistributedLock keeps the metadata of the method it wraps', () => {
  const proto = DecoratorOrderController.prototype;

  it.each([
    ['above', 2],
    ['below', 2],
    ['guardedAbove', 1],
    ['guardedBelow', 1],
  ] as const)('keeps the name and arity of %s', (method, arity) => {
    expect(proto[method].name).toBe(method);
    expect(proto[method].length).toBe(arity);
  });

  it.each([
    ['above', 'above/:id'],
    ['below', 'below/:id'],
  ] as const)('keeps the route of %s', (method, path) => {
    expect(Reflect.getMetadata(PATH_METADATA, proto[method])).toBe(path);
    expect(Reflect.getMetadata(METHOD_METADATA, proto[method])).toBeDefined();
  });

  it.each(['guardedAbove', 'guardedBelow'] as const)(
    'keeps the guards, interceptors, status and custom metadata of %s from either side',
    (method) => {
      const handler = proto[method];
      expect(Reflect.getMetadata(GUARDS_METADATA, handler)).toEqual([TokenGuard]);
      expect(Reflect.getMetadata(INTERCEPTORS_METADATA, handler)).toEqual([EnvelopeInterceptor]);
      expect(Reflect.getMetadata(HTTP_CODE_METADATA, handler)).toBe(200);
      expect(new Reflector().get('audience', handler)).toBe('ops');
    },
  );
});

describe.each(PLATFORMS)('@DistributedLock above or below the route decorator (%s)', (platform) => {
  const fixture = useDecoratorApp(platform);

  it.each(['above', 'below'])('routes and locks with @DistributedLock %s @Post()', async (side) => {
    const path = `/decorator-order/${side}/o1`;
    const [holder, contender] = [`${side}:holder`, `${side}:contender`];
    const door = gate();
    fixture.probe.hold = (label) => (label === holder ? door.hold() : Promise.resolve());

    const holderResponse = post(fixture.url, path, holder);
    expect(await fixture.probe.entered(holder)).toBe(true);
    expect(await fixture.client.exists(`lock:${side}:o1`)).toBe(1);
    const contenderResponse = await post(fixture.url, path, contender);
    door.release();

    expect(contenderResponse.status).toBe(409);
    expect((await holderResponse).status).toBe(201);
    expect((await holderResponse).body).toEqual({ id: 'o1', key: `${side}:o1` });
    expect(await fixture.client.exists(`lock:${side}:o1`)).toBe(0);
  });

  describe.each([
    ['above', 'guarded-above'],
    ['below', 'guarded-below'],
  ])('with guards, pipes and interceptors, @DistributedLock %s @Post()', (_side, route) => {
    const call = (id: string, token?: string) => {
      const pending = request(fixture.url).post(`/decorator-order/${route}/${id}`);
      return token === undefined ? pending : pending.set('x-token', token);
    };

    it('runs the guard first: a refused request never runs the method', async () => {
      const response = await call('7');

      expect(response.status).toBe(403);
      expect(fixture.probe.notesOf(route)).toEqual([]);
    });

    it('runs the pipes first: a rejected argument never runs the method', async () => {
      const response = await call('seven', 'letmein');

      expect(response.status).toBe(400);
      expect(fixture.probe.notesOf(route)).toEqual([]);
    });

    it('locks on the piped argument, and the interceptor wraps the result', async () => {
      const response = await call('7', 'letmein');

      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: { id: 7, type: 'number', key: 'guarded:7' } });
      expect(fixture.probe.notesOf(route)).toEqual(['guarded:7']);
    });
  });
});
