import { request, type ClientRequest, type IncomingMessage } from 'node:http';

/** One open server-sent-events response, read event by event. */
export interface SseConnection {
  readonly status: number;
  /** The parsed `data` of the next event not read yet; rejects after `timeout` ms. */
  next(timeout?: number): Promise<unknown>;
  /** Settles when the server ends the response. */
  readonly ended: Promise<void>;
  /** Drops the connection, as a client closing its tab would. */
  close(): void;
}

/** Opens `url` and resolves once the response headers have arrived. */
export function openSse(url: string): Promise<SseConnection> {
  return new Promise((resolve, reject) => {
    const call: ClientRequest = request(url, { headers: { accept: 'text/event-stream' } });
    call.on('error', reject);
    call.on('response', (response) => resolve(readEvents(call, response)));
    call.end();
  });
}

function readEvents(call: ClientRequest, response: IncomingMessage): SseConnection {
  const events: unknown[] = [];
  const waiting: Array<(event: unknown) => void> = [];
  let buffer = '';
  response.setEncoding('utf8');
  response.on('data', (chunk: string) => {
    buffer += chunk;
    let boundary: number;
    while ((boundary = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, boundary);
      buffer = buffer.slice(boundary + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .join('\n');
      if (!data) continue;
      const event: unknown = JSON.parse(data);
      const waiter = waiting.shift();
      if (waiter) waiter(event);
      else events.push(event);
    }
  });
  const ended = new Promise<void>((resolve) => {
    response.on('end', resolve);
    response.on('close', resolve);
  });
  return {
    status: response.statusCode ?? 0,
    ended,
    next(timeout = 5_000) {
      if (events.length > 0) return Promise.resolve(events.shift());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no SSE event in time')), timeout);
        waiting.push((event) => {
          clearTimeout(timer);
          resolve(event);
        });
      });
    },
    close() {
      call.destroy();
    },
  };
}
