import { ExecutionError, Redlock } from '@sesamecare-oss/redlock';
import { connect } from './connect.js';
import type { Contender, Tuning } from './contender.js';
import { HOT_KEY, redlockContender } from './redlock.js';

/**
 * @sesamecare-oss/redlock 1.4, the maintained fork of node-redlock (ioredis only), on a single
 * client: the same retry settings as the redlock contender. Its scripts SELECT the configured db
 * (`redis.pcall`) before their work, inside the same EVALSHA.
 */
export async function createSesamecareRedlock(url: string, tuning: Tuning): Promise<Contender> {
  const client = await connect(url);
  const redlock = new Redlock([client], tuning === 'hot-key' ? HOT_KEY : {});
  // Each refused attempt is emitted as an 'error' for observability, as its README says to
  // listen for: without a listener, EventEmitter would throw it.
  redlock.on('error', () => undefined);
  const refused = (error: unknown): boolean => error instanceof ExecutionError;
  return redlockContender('@sesamecare-oss/redlock', client, redlock, refused, tuning);
}
