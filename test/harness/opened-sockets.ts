import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { outcome, within, type Outcome } from './waits.js';

const CHANNEL = 'net.client.socket';

/**
 * Runs `run` and collects every TCP client socket this process opens meanwhile, as Node's
 * `net.client.socket` diagnostics channel reports them, until two turns of the event loop after
 * it settled: ioredis opens a new client's socket on a later tick than the one that made it.
 */
export async function socketsOpenedBy<T>(
  run: () => T | Promise<T>,
): Promise<{ readonly settled: Outcome<T>; readonly sockets: readonly Socket[] }> {
  const sockets: Socket[] = [];
  const heard = (message: unknown): void =>
    void sockets.push((message as { socket: Socket }).socket);
  subscribe(CHANNEL, heard);
  try {
    const settled = await outcome(run);
    for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
    return { settled, sockets };
  } finally {
    unsubscribe(CHANNEL, heard);
  }
}

/** Resolves once every one of `sockets` has closed; fails naming how many stay open. */
export async function allClosed(sockets: readonly Socket[], timeoutMs = 3_000): Promise<void> {
  const open = sockets.filter((socket) => !socket.closed);
  const closes = open.map((socket) => new Promise((resolve) => socket.once('close', resolve)));
  await within(`${open.length} socket(s) to close`, Promise.all(closes), timeoutMs);
}
