import { RenewalThroughput, THROUGHPUT_MEMORY } from './renewal-throughput.js';

describe('RenewalThroughput', () => {
  it('measures nothing while renewal keeps up', () => {
    const throughput = new RenewalThroughput();
    throughput.answered(1_000, 10);
    throughput.lineWaiting(false, 20);
    expect(throughput.rate).toBeUndefined();
  });

  it('measures the rate answered while leases waited in line, and keeps it a while after', () => {
    const throughput = new RenewalThroughput();
    throughput.lineWaiting(true, 0);
    expect(throughput.until).toBe(Infinity);
    for (let at = 10; at <= 100; at += 10) throughput.answered(100, at); // 10,000 a second
    throughput.lineWaiting(false, 100);
    expect(throughput.rate).toBeCloseTo(10_000);
    expect(throughput.until).toBe(100 + THROUGHPUT_MEMORY);
  });

  it('yields a rate once a second from a line that never clears, the latest counting most', () => {
    const throughput = new RenewalThroughput();
    throughput.lineWaiting(true, 0);
    throughput.answered(8_000, 1_000);
    expect(throughput.rate).toBeCloseTo(8_000);
    throughput.answered(4_000, 2_000);
    expect(throughput.rate).toBeCloseTo((8_000 + 3 * 4_000) / 4);
  });

  it('takes no measure from a line full for a moment only', () => {
    const throughput = new RenewalThroughput();
    throughput.lineWaiting(true, 0);
    throughput.answered(1, 1);
    throughput.lineWaiting(false, 2);
    expect(throughput.rate).toBeUndefined();
  });
});
