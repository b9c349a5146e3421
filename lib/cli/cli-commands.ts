import type { Cluster, Redis } from 'ioredis';
import { LockInspections } from '../engine/lock-inspections.js';
import { RedisLockStore } from '../stores/redis/redis-lock.store.js';
import type { CliCommand } from './cli-args.js';
import { LIST_HEADER, listRow, printInspection, tableLines, type Print } from './cli-output.js';
import { EXIT, type ExitCode } from './exit-codes.js';

/** Rows printed together: the table's columns are sized by the first batch. */
const ROWS_PER_BATCH = 500;

/** Runs one command on `client`, printing through `print`; returns the exit code. */
export async function runCommand(
  command: CliCommand,
  client: Redis | Cluster,
  print: Print,
): Promise<ExitCode> {
  // The store leaves the client open: main.ts closes it.
  const store = new RedisLockStore(client);
  const locks = new LockInspections(store, command.prefix, command.timeout);
  try {
    if (command.command === 'list') return await list(locks, command, print);
    if (command.command === 'inspect') return await inspect(locks, command, print);
    return await release(locks, command, print);
  } finally {
    await store.close();
  }
}

async function inspect(
  locks: LockInspections,
  command: CliCommand,
  print: Print,
): Promise<ExitCode> {
  const found = await locks.inspect(command.target!);
  if (command.json) print(JSON.stringify(found ?? null, null, 2));
  else if (found) printInspection(found, print);
  else print(`"${command.target}" is free.`);
  return found ? EXIT.ok : EXIT.notFound;
}

async function release(
  locks: LockInspections,
  command: CliCommand,
  print: Print,
): Promise<ExitCode> {
  const released = await locks.forceRelease(command.target!);
  if (command.json) print(JSON.stringify({ key: command.target, released }));
  else
    print(
      released
        ? `Released "${command.target}" by force; its waiters were woken.`
        : `"${command.target}" is free.`,
    );
  return released ? EXIT.ok : EXIT.notFound;
}

/** Streams: a JSON array written item by item, or a table printed in batches. */
async function list(locks: LockInspections, command: CliCommand, print: Print): Promise<ExitCode> {
  let count = 0;
  let batch: string[][] = [];
  const widths: number[] = [];
  const flush = (): void => {
    const header = widths.length === 0 ? [LIST_HEADER] : [];
    for (const line of tableLines([...header, ...batch], widths)) print(line);
    batch = [];
  };
  if (command.json) print('[');
  for await (const summary of locks.list(command.target)) {
    if (command.json) print(`${count > 0 ? ',' : ''}${JSON.stringify(summary)}`);
    else if (batch.push(listRow(summary)) === ROWS_PER_BATCH) flush();
    count++;
  }
  if (command.json) print(']');
  else if (batch.length > 0) flush();
  else if (count === 0) print('No held lock matches.');
  return count > 0 ? EXIT.ok : EXIT.notFound;
}
