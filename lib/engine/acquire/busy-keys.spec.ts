import { BusyKeys } from './lock-acquirer.js';

/** A small deterministic generator, so a failing sequence can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
    return state / 0x80000000;
  };
}

describe('BusyKeys', () => {
  it('maps keys to entries, replaces an entry in place and forgets dropped keys', () => {
    const keys = new BusyKeys<object>();
    const first = {};
    const second = {};
    keys.set('lock:a', first);
    keys.set('lock:b', second);
    expect(keys.get('lock:a')).toBe(first);
    keys.set('lock:a', second);
    expect(keys.get('lock:a')).toBe(second);
    expect(keys.size).toBe(2);
    keys.deleteIf('lock:a', second);
    expect(keys.get('lock:a')).toBeUndefined();
    expect(keys.get('lock:b')).toBe(second);
    expect(keys.size).toBe(1);
  });

  it('drops a key only while its entry is the one given', () => {
    const keys = new BusyKeys<object>();
    const holder = {};
    keys.set('lock:a', holder);
    keys.deleteIf('lock:a', {});
    keys.deleteIf('lock:missing', holder);
    expect(keys.get('lock:a')).toBe(holder);
    expect(keys.size).toBe(1);
  });

  it('gives a snapshot of its entries, so they can be dropped while it is walked', () => {
    const keys = new BusyKeys<{ name: string }>();
    for (const name of ['a', 'b', 'c']) keys.set(`lock:${name}`, { name });
    for (const entry of keys.values()) keys.deleteIf(`lock:${entry.name}`, entry);
    expect(keys.size).toBe(0);
    expect(keys.values()).toEqual([]);
  });

  it('agrees with a Map through random sets and drops, across a burst that grows and empties it', () => {
    const keys = new BusyKeys<{ step: number }>();
    const reference = new Map<string, { step: number }>();
    const next = random(42);
    for (let step = 0; step < 60_000; step++) {
      // The pool of live keys grows past the point where the slots are let go, then empties.
      const pool = step < 30_000 ? 8 + step / 10 : 8 + (60_000 - step) / 10;
      const key = `lock:${Math.floor(next() * pool)}`;
      const entry = reference.get(key);
      if (next() < 0.5 || !entry) {
        const fresh = { step };
        keys.set(key, fresh);
        reference.set(key, fresh);
      } else {
        keys.deleteIf(key, entry);
        reference.delete(key);
      }
      if (step % 997 === 0) {
        expect(keys.size).toBe(reference.size);
        // One assertion per check: thousands of `expect` calls made this test take seconds.
        const wrong = [...reference].filter(([name, value]) => keys.get(name) !== value);
        expect(wrong).toEqual([]);
      }
    }
    for (const [name, value] of reference) keys.deleteIf(name, value);
    expect(keys.size).toBe(0);
    keys.set('lock:again', { step: -1 });
    expect(keys.get('lock:again')).toEqual({ step: -1 });
    expect(keys.values()).toEqual([{ step: -1 }]);
  });
});
