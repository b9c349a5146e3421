import type { Cluster, Redis } from 'ioredis';

/**
 * How long a QUIT may take before the connection is dropped. A connection that has just lost
 * its server can still read 'ready': its QUIT would then wait in the offline queue until ioredis
 * gave up on reconnecting (seconds), and shutdown with it.
 */
const QUIT_WAIT_MS = 1_000;

/** Closes a connection we own: politely when it is up, at once when it is down or reconnecting. */
export async function closeConnection(connection: Redis | Cluster): Promise<void> {
  if (connection.status === 'end') return;
  if (connection.status !== 'ready') {
    connection.disconnect();
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(resolve, QUIT_WAIT_MS, 'late');
  });
  const quit = connection.quit().then(
    () => 'quit' as const,
    () => 'failed' as const,
  );
  if ((await Promise.race([quit, late])) !== 'quit') connection.disconnect();
  clearTimeout(timer);
}
