import { newLockToken } from './lock-token.js';

describe('newLockToken', () => {
  it('makes 24-character base64url tokens, all different, across many batches', () => {
    const tokens = Array.from({ length: 10_000 }, () => newLockToken());

    expect(tokens.filter((token) => !/^[A-Za-z0-9_-]{24}$/.test(token))).toEqual([]);
    expect(new Set(tokens).size).toBe(tokens.length);
  });

  it('draws fresh random bytes for each batch: no token repeats a later batch', () => {
    // 256 tokens per batch; a repeated pool would give the same sequence again.
    const first = Array.from({ length: 256 }, () => newLockToken());
    const second = Array.from({ length: 256 }, () => newLockToken());

    expect(second.filter((token) => first.includes(token))).toEqual([]);
  });
});
