import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { reportFigures } from '../harness/figures.js';
import { RedisServer } from '../harness/redis-server.js';
import { gate, rendezvous } from '../fixtures/decorator-app/hold-policies.js';
import { overlapOf, Probe } from '../fixtures/decorator-app/probe.js';
import { EventsAppModule } from '../fixtures/events-app/events-app.module.js';

/** Lets every callback already queued run (timers, I/O, promise continuations) once. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('@DistributedLock on @OnEvent() handlers', () => {
  let redis: RedisServer;
  let probe: Probe;
  let app: INestApplicationContext;
  let events: EventEmitter2;

  beforeAll(async () => {
    redis = await RedisServer.start();
    probe = new Probe();
    app = await NestFactory.createApplicationContext(
      EventsAppModule.register({ redis: redis.url }, probe),
      { logger: false },
    );
    events = app.get(EventEmitter2);
  });

  afterAll(async () => {
    await app?.close();
    await redis?.stop();
  });

  describe.each([
    ['above', 'order.paid'],
    ['below', 'order.shipped'],
  ])('with @DistributedLock %s @OnEvent()', (side, event) => {
    it('serializes two handlers for the same order', async () => {
      const [first, second] = [`${side}-same-1`, `${side}-same-2`];
      const door = gate();
      probe.hold = (label) => (label === first ? door.hold() : Promise.resolve());

      const firstResult = events.emitAsync(event, { id: `${side}-1`, tag: first });
      expect(await probe.entered(first)).toBe(true);
      // emitAsync calls the handler at once; by the next turn it would be inside, were it not locked out.
      const secondResult = events.emitAsync(event, { id: `${side}-1`, tag: second });
      await nextTurn();
      expect(await probe.entered(second, 0)).toBe(false);
      door.release();

      expect(await Promise.all([firstResult, secondResult])).toEqual([
        [`order-event:${side}-1`],
        [`order-event:${side}-1`],
      ]);
      const [a, b] = [probe.sectionOf(first), probe.sectionOf(second)];
      expect(b.enter).toBeGreaterThanOrEqual(a.exit);
      reportFigures(`@OnEvent ${side} same key`, { overlapMs: overlapOf(a, b) });
    });

    it('runs handlers for different orders in parallel', async () => {
      const [first, second] = [`${side}-other-1`, `${side}-other-2`];
      probe.hold = rendezvous(probe, [first, second]);

      const results = await Promise.all([
        events.emitAsync(event, { id: `${side}-left`, tag: first }),
        events.emitAsync(event, { id: `${side}-right`, tag: second }),
      ]);

      expect(results).toEqual([[`order-event:${side}-left`], [`order-event:${side}-right`]]);
      const overlap = overlapOf(probe.sectionOf(first), probe.sectionOf(second));
      expect(overlap).toBeGreaterThan(0);
      reportFigures(`@OnEvent ${side} different keys`, { overlapMs: overlap });
    });
  });

  it("returns onBusy's result when onBusy is a function, without running the handler", async () => {
    const door = gate();
    probe.hold = (label) => (label === 'refund-holder' ? door.hold() : Promise.resolve());
    const holder = events.emitAsync('order.refunded', { id: '5', tag: 'refund-holder' });
    expect(await probe.entered('refund-holder')).toBe(true);

    const busy = await events.emitAsync('order.refunded', { id: '5', tag: 'refund-contender' });
    door.release();

    expect(busy).toEqual([{ busy: 'refund:5', id: '5' }]);
    expect(await holder).toEqual([{ refunded: '5' }]);
    expect(probe.sections.some((section) => section.label === 'refund-contender')).toBe(false);
  });
});
