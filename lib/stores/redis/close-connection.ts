import type { Cluster, Redis } from 'ioredis';

/** Closes a connection we own: politely when it is up, at once when it is down or reconnecting. */
export async function closeConnection(connection: Redis | Cluster): Promise<void> {
  if (connection.status === 'end') return;
  if (connection.status !== 'ready') {
    connection.disconnect();
    return;
  }
  try {
    await connection.quit();
  } catch {
    connection.disconnect();
  }
}
