/**
 * A foreign client on the lock keys: another program's plain `SET key token NX PX ttl` holder,
 * as many apps write one, with a token of its own length and alphabet. It releases by
 * compare-and-delete and extends by compare-and-PEXPIRE (the usual Lua), and must always find
 * its value as it wrote it: the library may wait for its key, never change it.
 */
import type { Cluster, Redis } from 'ioredis';
import type { ForeignOp } from './world-ops.js';
import {
  FOREIGN,
  MS,
  now,
  type CompareRecord,
  type SectionRecord,
  type ServiceReport,
} from './model-records.js';

const COMPARE_AND_DELETE =
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
const COMPARE_AND_EXPIRE =
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0";

/**
 * The foreign holder counts its lease from before its SET, less this: it stops, and judges its
 * compares, well inside the lease Redis holds for it.
 */
export const FOREIGN_MARGIN_MS = 10;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** A retry at once, as a tight `SET NX` loop does: the next turn of the loop, no timer. */
const spin = (ms: number): Promise<void> =>
  ms > 0 ? sleep(ms) : new Promise((resolve) => setImmediate(resolve));

export async function runForeign(
  op: ForeignOp,
  id: string,
  client: Redis | Cluster,
  prefix: string,
  emit: (report: ServiceReport) => void,
): Promise<void> {
  const fullKey = prefix + op.key;
  const giveUp = performance.now() + op.wait;
  let sent = now();
  for (;;) {
    sent = now();
    const answer = await client.set(fullKey, op.token, 'PX', op.ttl, 'NX').catch(() => null);
    if (answer === 'OK') break;
    if (performance.now() >= giveUp) return;
    await spin(op.spinMs);
  }
  const enter = now();
  const granted = sent;
  let liveUntil = sent + BigInt(op.ttl - FOREIGN_MARGIN_MS) * MS;
  const section: SectionRecord = {
    id,
    svc: FOREIGN,
    keys: [op.key],
    kind: { type: 'mutex' },
    token: op.token,
    enter: String(enter),
    deadline: String(liveUntil),
    ttl: op.ttl,
    autoRenew: false,
    remaining: Number(liveUntil - enter) / 1e6,
  };
  emit({ type: 'section', section });
  const compare = async (
    kind: CompareRecord['op'],
    script: string,
    args: (string | number)[],
  ): Promise<boolean> => {
    const at = now();
    const reply = await client.eval(script, 1, fullKey, op.token, ...args).catch(() => undefined);
    const answered = now();
    const ok = reply === 1;
    const found = ok ? undefined : await client.get(fullKey).catch(() => undefined);
    const record = { id, key: op.key, op: kind, sent: String(at), answered: String(answered), ok, liveUntil: String(liveUntil), since: String(granted), ...(found !== undefined && { found }) }; // prettier-ignore
    emit({ type: 'compare', compare: record });
    return ok;
  };
  const holdUntil = Number(enter) / 1e6 + op.holdMs;
  const left = (): number => Math.min(holdUntil, Number(liveUntil) / 1e6) - Number(now()) / 1e6;
  let held = true;
  if (op.extendTo !== undefined) {
    await sleep(Math.max(0, left() / 2));
    const at = now();
    held = await compare('compare-and-expire', COMPARE_AND_EXPIRE, [op.extendTo]);
    if (held) {
      liveUntil = at + BigInt(op.extendTo - FOREIGN_MARGIN_MS) * MS;
      section.deadline = String(liveUntil);
      emit({ type: 'section', section });
    }
  }
  if (held) await sleep(Math.max(0, left()));
  section.leave = String(now());
  emit({ type: 'section', section });
  if (held) await compare('compare-and-delete', COMPARE_AND_DELETE, []);
}
