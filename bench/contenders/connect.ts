import { Redis } from 'ioredis';

/** A fresh ioredis connection, resolved once it is ready. */
export async function connect(url: string): Promise<Redis> {
  const client = new Redis(url, { lazyConnect: true });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

export async function quit(client: Redis): Promise<void> {
  await client.quit().catch(() => client.disconnect());
}
