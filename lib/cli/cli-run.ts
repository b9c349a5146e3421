/** The admin CLI's run: parse, connect, run one command, say how it went. */
import type { Cluster, Redis } from 'ioredis';
import { LockOptionsError, LockKeyError, LockStoreError } from '../errors/lock.errors.js';
import { parseCommandLine, USAGE } from './cli-args.js';
import { runCommand } from './cli-commands.js';
import { createClient, open, UnreachableError } from './cli-connection.js';
import { EXIT, UsageError, type ExitCode } from './exit-codes.js';

/** Where the CLI writes: results to `out`, errors and usage to `err`. */
export interface CliOutput {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

/**
 * Runs one command line; resolves its exit code (see exit-codes.ts). Never rejects. Connecting
 * and the command together take at most `--timeout`: past it, the run ends with exit code 3
 * and prints nothing more.
 */
export async function runCli(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: CliOutput,
): Promise<ExitCode> {
  let client: Redis | Cluster | undefined;
  let over = false;
  try {
    const command = parseCommandLine(argv, env);
    if (command.command === 'help') {
      io.out(USAGE);
      return EXIT.ok;
    }
    const opened = (client = createClient(command.url, command.cluster, command.timeout));
    const print = (line: string): void => void (over || io.out(line));
    const work = open(opened).then(() => runCommand(command, opened, print));
    return await withinTimeout(work, command.timeout);
  } catch (error) {
    return failure(error, io.err);
  } finally {
    over = true;
    client?.disconnect();
  }
}

/** `work`'s result, or an `UnreachableError` once `ms` have passed without it. */
function withinTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new UnreachableError(`Redis gave no answer within ${ms} ms (--timeout).`)),
      ms,
    );
  });
  // The losing work still settles (its connection is dropped): its failure is not the run's.
  work.catch(() => undefined);
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/** The exit code of a failure, its message on stderr. */
function failure(error: unknown, print: (line: string) => void): ExitCode {
  const message = error instanceof Error ? error.message : String(error);
  print(message);
  if (
    error instanceof UsageError ||
    error instanceof LockKeyError ||
    error instanceof LockOptionsError
  ) {
    print(`\n${USAGE}`);
    return EXIT.usage;
  }
  if (error instanceof UnreachableError || isConnectionError(error)) return EXIT.unreachable;
  return EXIT.failed;
}

/** A store error whose cause is the connection (timeout, closed), not a refusal by Redis. */
function isConnectionError(error: unknown): boolean {
  if (!(error instanceof LockStoreError)) return false;
  const cause = (error as { cause?: unknown }).cause;
  return !(cause instanceof Error && cause.name === 'ReplyError');
}
