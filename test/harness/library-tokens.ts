import {
  PROCESS_ID_CHARS,
  TOKEN_CHARS,
  TOKEN_CHECK_CHARS,
  tokenCheckOf,
} from '../../lib/stores/lock-inspection.interface.js';

/**
 * A token or queue id of the form the engine makes, named for a test: `name` padded to a
 * process id and its random part, then that process id's check. A store may rely on the form
 * (see TOKEN_CHARS): the Redis store marks only values that end with their check.
 */
export function libraryToken(name: string): string {
  const start = name.padEnd(TOKEN_CHARS - TOKEN_CHECK_CHARS, '0');
  return start + tokenCheckOf(start.slice(0, PROCESS_ID_CHARS));
}
