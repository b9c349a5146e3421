import { parseArgs } from 'node:util';
import { UsageError } from './exit-codes.js';

/*
 * The admin CLI's command line: its usage text, and the arguments parsed and checked.
 */

export const USAGE = `Usage: nestjs-distributed-lock <command> [options]

Commands:
  list [pattern]          held locks whose names match the glob (default *), paged with SCAN
  inspect <key>           holders (host, pid, instance id, time left), waiters, kind, limit, fence
  release <key> --force   remove the lock whatever holds it, and wake its waiters

Options:
  --redis <url>           redis:// or rediss:// URL (default: $REDIS_URL, else redis://127.0.0.1:6379)
  --cluster               the URL is a node of a Redis Cluster: list scans every master
  --prefix <prefix>       the module's keyPrefix (default: lock:)
  --json                  print JSON instead of a table
  --timeout <ms>          longest wait for Redis, connecting included (default: 5000)
  -h, --help              this help

Exit codes: 0 ok, 1 not found (free key, no match), 2 usage (no command, too), 3 Redis
unreachable or no answer within --timeout, 4 Redis error.`;

/** A command line, parsed and checked. */
export interface CliCommand {
  readonly command: 'list' | 'inspect' | 'release' | 'help';
  /** The key (inspect, release) or the pattern (list). */
  readonly target?: string;
  readonly url: string;
  readonly cluster: boolean;
  readonly prefix: string;
  readonly json: boolean;
  readonly timeout: number;
}

const DEFAULT_URL = 'redis://127.0.0.1:6379';

/** Parses `argv` (without node and the script) with node:util's parseArgs; throws `UsageError`. */
export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): CliCommand {
  const { values, positionals } = parseOrUsage(argv);
  const [command, target, ...extra] = positionals;
  const common = {
    url: values.redis ?? env.REDIS_URL ?? DEFAULT_URL,
    cluster: values.cluster === true,
    prefix: values.prefix ?? 'lock:',
    json: values.json === true,
    timeout: timeoutOf(values.timeout),
  };
  if (values.help) return { command: 'help', ...common };
  if (command === undefined) throw new UsageError('Give a command: list, inspect or release.');
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}".`);
  if (command === 'list') return { command, target, ...common };
  if (command !== 'inspect' && command !== 'release') {
    throw new UsageError(`Unknown command "${command}".`);
  }
  if (target === undefined) throw new UsageError(`"${command}" needs a key.`);
  if (command === 'release' && values.force !== true) {
    throw new UsageError(
      'release frees a lock whoever holds it, while its holder may still run: add --force.',
    );
  }
  return { command, target, ...common };
}

function parseOrUsage(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        redis: { type: 'string' },
        cluster: { type: 'boolean' },
        prefix: { type: 'string' },
        json: { type: 'boolean' },
        force: { type: 'boolean' },
        timeout: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function timeoutOf(value: string | undefined): number {
  if (value === undefined) return 5_000;
  const ms = Number(value);
  if (!Number.isSafeInteger(ms) || ms < 1) {
    throw new UsageError(`--timeout must be a whole number of ms, got "${value}".`);
  }
  return ms;
}
