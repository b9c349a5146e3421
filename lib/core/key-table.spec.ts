import { KeyTable } from './key-table.js';

/** A small deterministic generator, so a failing sequence can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
    return state / 0x80000000;
  };
}

describe('KeyTable', () => {
  it('maps keys to values, replaces a value in place and forgets deleted keys', () => {
    const table = new KeyTable<object>();
    const first = {};
    const second = {};
    table.set('lock:a', first);
    table.set('lock:b', second);
    expect(table.get('lock:a')).toBe(first);
    table.set('lock:a', second);
    expect(table.get('lock:a')).toBe(second);
    expect(table.size).toBe(2);
    table.deleteIf('lock:a', second);
    expect(table.get('lock:a')).toBeUndefined();
    expect(table.get('lock:b')).toBe(second);
    expect(table.size).toBe(1);
  });

  it('deletes a key only while it maps to the value given', () => {
    const table = new KeyTable<object>();
    const holder = {};
    table.set('lock:a', holder);
    table.deleteIf('lock:a', {});
    expect(table.get('lock:a')).toBe(holder);
    table.deleteIf('lock:missing', holder);
    expect(table.size).toBe(1);
  });

  it('agrees with a Map through random sets and deletes that grow and shrink it', () => {
    const table = new KeyTable<number>();
    const reference = new Map<string, number>();
    const next = random(42);
    for (let step = 0; step < 200_000; step++) {
      // A growing, then shrinking, pool of live keys: the table doubles and halves on the way.
      const pool = step < 100_000 ? 16 + step / 50 : 16 + (200_000 - step) / 50;
      const key = `lock:${Math.floor(next() * pool)}`;
      if (next() < 0.55) {
        table.set(key, step);
        reference.set(key, step);
      } else if (reference.has(key)) {
        table.deleteIf(key, reference.get(key)!);
        reference.delete(key);
      }
      if (step % 997 === 0) {
        expect(table.size).toBe(reference.size);
        for (const [live, value] of reference) expect(table.get(live)).toBe(value);
      }
    }
    expect(table.entries().sort((a, b) => a - b)).toEqual(
      [...reference.values()].sort((a, b) => a - b),
    );
  });

  it('finds every key of a long probe run after deletes inside it', () => {
    const table = new KeyTable<string>();
    // Many keys in a small table: runs wrap around the end and cross each other's homes.
    const keys = Array.from({ length: 7 }, (_, i) => `k${i}`);
    for (const key of keys) table.set(key, key);
    for (const gone of ['k0', 'k3', 'k6']) table.deleteIf(gone, gone);
    for (const key of keys) {
      expect(table.get(key)).toBe(['k0', 'k3', 'k6'].includes(key) ? undefined : key);
    }
  });
});
