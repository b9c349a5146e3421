/**
 * What a deadline on every store call costs per uncontended lock at C workers (`--c 8` by
 * default), and what it would cost without a promise of its own. Five clients send raw's two
 * commands (SET NX PX, then a compare-and-delete script), each command built as the library's
 * Redis store builds it and sent on its own ioredis connection:
 * - `raw`: the bench's raw contender (ioredis's own `set` and `evalsha`);
 * - `commands`: the commands, with no deadline;
 * - `+ store-call deadline`: each command's promise wrapped in the engine's bounded store call
 *   (`callStore`), as every acquire and release of the library is: one more promise per call;
 * - `+ deadline on the command`: the same deadline list (`CallDeadlines`) timing the ioredis
 *   command itself, which it would reject on expiry (as ioredis's own `commandTimeout` does);
 *   the reply ends the timing as it is parsed, and the caller awaits ioredis's promise;
 * - `with its reject wrapped`: the same, with the command's `reject` (public ioredis API)
 *   replaced by a closure that calls it, as a store would need to turn failures into its own
 *   errors.
 * Contenders take turns in blocks of 400 cycles per worker, in an order rotated every round;
 * figures are medians over the rounds of each block's speed against raw's block in the same
 * round. Run: `npm run build && node --import tsx bench/probes/deadline-cost.ts [--c 8]`
 * (starts its own redis-server unless REDIS_URL is set; ROUNDS=60 by default).
 */
import { randomUUID } from 'node:crypto';
import { Command, type Redis } from 'ioredis';
import { CallDeadlines, TimedCall } from '../../dist/core/call-deadlines.js';
import { callStore } from '../../dist/core/store-call.js';
import { connect, quit } from '../contenders/connect.js';
import { createContender, type Contender } from '../contenders/index.js';
import { RELEASE, RELEASE_SHA } from '../contenders/raw.js';
import { openRedisTarget } from '../redis-target.js';
import { median } from '../stats.js';
import { cycleBlock } from './uncontended-cycles.js';

const CALLERS = Number(process.argv[process.argv.indexOf('--c') + 1] || 8) || 8;
const ROUNDS = Number(process.env.ROUNDS ?? 60);
const BLOCK = 400;
const DEADLINE_MS = 5_000;

type Deadline = 'none' | 'store call' | 'command' | 'command, reject wrapped';

/** A command that ends its timing in the step its reply is parsed. */
class TimedCommand extends Command {
  timing?: CommandTiming;

  override transformReply(result: Buffer | Buffer[]): ReturnType<Command['transformReply']> {
    this.timing?.end();
    return super.transformReply(result);
  }
}

/** The deadline list's entry for one command: on expiry it fails the command itself. */
class CommandTiming extends TimedCall {
  constructor(
    deadlines: CallDeadlines,
    private readonly command: TimedCommand,
  ) {
    super(deadlines);
  }

  expire(): void {
    this.command.reject(new Error(`no answer within ${DEADLINE_MS} ms`));
  }
}

async function commandsClient(name: string, url: string, deadline: Deadline): Promise<Contender> {
  const client: Redis = await connect(url);
  await client.script('LOAD', RELEASE);
  const deadlines = new CallDeadlines(DEADLINE_MS);
  const options = { replyEncoding: 'utf8' } as const;
  const send = (command: string, args: (string | number)[]): Promise<unknown> => {
    const sent = new TimedCommand(command, args, options);
    if (deadline !== 'none' && deadline !== 'store call') {
      sent.timing = new CommandTiming(deadlines, sent);
      deadlines.track(sent.timing);
    }
    if (deadline === 'command, reject wrapped') {
      // What turning each failure into the caller's error would take: ioredis's `reject`,
      // replaced by a closure of our own that calls it.
      const reject = sent.reject;
      sent.reject = (error) => reject(error);
    }
    const reply = client.sendCommand(sent) as Promise<unknown>;
    if (deadline !== 'store call') return reply;
    return callStore(reply, undefined, command === 'set' ? 'acquire' : 'release', deadlines);
  };
  return {
    name,
    settings: '',
    async acquire(key, { ttl }) {
      const token = randomUUID();
      if ((await send('set', [key, token, 'PX', ttl, 'NX'])) !== 'OK') return undefined;
      return { release: async () => void (await send('evalsha', [RELEASE_SHA, 1, key, token])) };
    },
    close: () => quit(client),
  };
}

const target = await openRedisTarget(() => undefined);
const contenders: Contender[] = [
  await createContender('raw', target.url, 'defaults'),
  await commandsClient('commands', target.url, 'none'),
  await commandsClient('+ store-call deadline', target.url, 'store call'),
  await commandsClient('+ deadline on the command', target.url, 'command'),
  await commandsClient('  with its `reject` wrapped', target.url, 'command, reject wrapped'),
];
const blockMs = contenders.map(() => [] as number[]);
for (let round = -3; round < ROUNDS; round++) {
  for (let step = 0; step < contenders.length; step++) {
    const at = (round + 3 + step) % contenders.length;
    const startedAt = performance.now();
    await cycleBlock(contenders[at], CALLERS, BLOCK, 'deadline');
    if (round >= 0) blockMs[at].push(performance.now() - startedAt);
  }
}
console.log(`C = ${CALLERS}, ${ROUNDS} rounds of ${BLOCK} cycles per worker and contender`);
for (const [at, { name }] of contenders.entries()) {
  const ratio = median(blockMs[at].map((ms, round) => blockMs[0][round] / ms));
  console.log(`${name.padEnd(28)} ${ratio.toFixed(3)}× raw`);
}
for (const contender of contenders) await contender.close();
await target.close();
