import type { Redis } from 'ioredis';

/**
 * Records every connection `client.duplicate()` makes from now on, such as the subscriber the
 * Redis store opens for release notifications: a test can then watch that connection from the
 * outside (its listeners, its socket) without reaching into the store.
 */
export function recordDuplicates(client: Redis): readonly Redis[] {
  const made: Redis[] = [];
  const duplicate = client.duplicate.bind(client);
  client.duplicate = (...args: Parameters<Redis['duplicate']>): Redis => {
    const connection = duplicate(...args);
    made.push(connection);
    return connection;
  };
  return made;
}
