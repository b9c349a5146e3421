import { LockKeyError, LockOptionsError } from '../../errors/lock.errors.js';
import { describe } from './lock-options.validation.js';

/** Longest key name accepted, in UTF-8 bytes. */
export const MAX_KEY_BYTES = 1024;

/**
 * The most keys one lock takes. A multi-key lock's acquire and release are each one script that
 * works through every key (and its fence counter and turn list) while Redis serves nobody else;
 * this keeps that call short.
 */
export const MAX_KEYS_PER_LOCK = 50;

const controlCharacter = /\p{Cc}/u;

/**
 * True for C0/C1 control characters and lone surrogates (which UTF-8 encodes as U+FFFD, so two
 * different names would share one Redis key).
 */
export function hasControlCharacter(text: string): boolean {
  // Most keys are short and plain: one pass over the code units settles them.
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x20 || (unit >= 0x7f && unit <= 0x9f) || (unit >= 0xd800 && unit <= 0xdfff)) {
      return controlCharacter.test(text) || !text.isWellFormed();
    }
  }
  return false;
}

/** Empty or only white space: almost always an empty value where a name was meant. */
export function isBlank(text: string): boolean {
  // Most keys start with a printable ASCII character that is not a space: no trim needed.
  const first = text.charCodeAt(0);
  if (first > 0x20 && first < 0x7f) return false;
  return text.trim().length === 0;
}

/** Checks a key name, or a list of them for a multi-key lock, before anything reaches Redis. */
export function validateLockKeys(key: unknown): readonly string[] {
  if (Array.isArray(key)) {
    if (key.length === 0) {
      throw new LockKeyError('A multi-key lock needs at least one key; got an empty array.');
    }
    // Indexed: `forEach` skips the holes of a sparse array, which would become "undefined".
    for (let i = 0; i < key.length; i++) validateLockKey(key[i]);
    // Order is kept: `lock.fence` is the first key's fence, so callers choose which one it is.
    const names = [...new Set(key as string[])];
    if (names.length > MAX_KEYS_PER_LOCK) {
      throw new LockOptionsError(
        `A lock takes at most ${MAX_KEYS_PER_LOCK} keys (MAX_KEYS_PER_LOCK), got ${names.length}. ` +
          'Lock a coarser key, or take the keys in several locks, always in the same order.',
      );
    }
    return names;
  }
  validateLockKey(key);
  return [key as string];
}

function validateLockKey(key: unknown): void {
  if (typeof key !== 'string') {
    throw new LockKeyError(`A lock key must be a string, got ${describe(key)}.`);
  }
  if (isBlank(key)) {
    throw new LockKeyError(
      `A lock key must not be empty or only white space, got ${describe(key)}. Name the resource you are locking ` +
        '(an empty template value is the usual cause).',
    );
  }
  // A UTF-16 unit takes at most 3 UTF-8 bytes: short keys need no count.
  if (key.length * 3 > MAX_KEY_BYTES && Buffer.byteLength(key) > MAX_KEY_BYTES) {
    throw new LockKeyError(
      `Lock key ${describe(key)} is longer than ${MAX_KEY_BYTES} bytes. Lock on a short id, or a hash of the long value.`,
      key.slice(0, 40),
    );
  }
  // Also what keeps lock keys out of the companion keys' namespace, named behind a control
  // character (see COMPANION_SEPARATOR in stores/redis/key-slots.ts); `keyPrefix` is held to the
  // same rule at bootstrap.
  if (hasControlCharacter(key)) {
    throw new LockKeyError(
      `Lock key ${describe(key)} contains a control character. Use printable characters only.`,
      key,
    );
  }
}
