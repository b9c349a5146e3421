import { reportFigures } from '../harness/figures.js';
import { AccountsService } from '../fixtures/decorator-app/accounts.js';
import { PLATFORMS } from '../fixtures/decorator-app/http-app.js';
import { useDecoratorApp } from '../harness/decorator-app.js';
import { post } from '../harness/http-post.js';

// The fixture's locks wait 1 s: a call chain that blocked on its own lock would fail with 409
// after that, so a 201 well within it means the nested calls never waited.
describe.each(PLATFORMS)('reentrant @DistributedLock calls (%s)', (platform) => {
  const fixture = useDecoratorApp(platform);

  it('completes A → B → A on the same key without deadlock, under one lock and fence', async () => {
    const startedAt = performance.now();
    const response = await post(fixture.url, '/accounts/acc1/transfer');
    const elapsed = performance.now() - startedAt;

    expect(response.status).toBe(201);
    const { outer, middle, innermost } = response.body as Record<string, unknown>;
    expect(typeof outer).toBe('number');
    expect([middle, innermost]).toEqual([outer, outer]);
    expect(await fixture.client.exists('lock:account:acc1')).toBe(0);
    reportFigures(`${platform} reentrant A→B→A`, { ms: Math.round(elapsed) });
  });

  it('takes a new fence for each outermost call', async () => {
    const accounts = fixture.app.get(AccountsService);

    const first = await accounts.transfer('acc2');
    const second = await accounts.transfer('acc2');

    expect(first).toEqual({ outer: first.outer, middle: first.outer, innermost: first.outer });
    expect(second).toEqual({ outer: second.outer, middle: second.outer, innermost: second.outer });
    expect(second.outer).toBeGreaterThan(first.outer!);
  });

  it('keeps concurrent outermost calls on one key apart: each chain is reentrant only to itself', async () => {
    const accounts = fixture.app.get(AccountsService);

    const results = await Promise.all([accounts.transfer('acc3'), accounts.transfer('acc3')]);

    // Two chains, two acquisitions: had the second joined the first's lock, they would share a fence.
    expect(new Set(results.map((result) => result.outer)).size).toBe(2);
    for (const result of results)
      expect([result.middle, result.innermost]).toEqual([result.outer, result.outer]);
  });
});
