import request, { type Response } from 'supertest';

/**
 * Sends a POST at once (supertest only sends once `then` is called) and resolves with the
 * response, whatever its status. `tag` names the request for the fixture's probe.
 */
export function post(url: string, path: string, tag?: string): Promise<Response> {
  const call = request(url).post(path);
  return (tag === undefined ? call : call.query({ tag })).then((response) => response);
}
