import { clusterSlot, hashTagOf } from './cluster-slot.js';
import { companionKey, fenceKeyOf } from './key-slots.js';

describe('clusterSlot', () => {
  it.each([
    ['foo', 12182],
    ['123456789', 12739],
    ['{user1000}.following', 3443],
    ['{user1000}.followers', 3443],
  ])('hashes %s to slot %i like Redis does', (key, slot) => {
    expect(clusterSlot(key)).toBe(slot);
  });

  it('hashes only the first non-empty hash tag', () => {
    expect(hashTagOf('a{b}c{d}')).toBe('b');
    expect(hashTagOf('a{}b')).toBe('a{}b');
    expect(hashTagOf('a{b')).toBe('a{b');
  });
});

describe('companion keys', () => {
  it.each(['lock:a', 'lock:{order:1}:x', 'lock:{a}{b}', 'lock:a{b'])(
    'keeps %s and its fence counter in one slot',
    (key) => {
      expect(clusterSlot(fenceKeyOf(key))).toBe(clusterSlot(key));
    },
  );

  it.each(['lock:a{}b', 'x}y'])(
    'cannot pair %s (stray braces) with a same-slot companion',
    (key) => {
      expect(clusterSlot(fenceKeyOf(key))).not.toBe(clusterSlot(key));
    },
  );

  it('wraps a key without a hash tag, so the lock key itself stays as given', () => {
    expect(companionKey('lock:a', 'fence')).toBe('{lock:a}\x1ffence');
    expect(companionKey('lock:{t}:a', 'fence')).toBe('lock:{t}:a\x1f\x1ffence');
  });
});
