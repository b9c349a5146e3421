import type {
  LockInspection,
  LockProcess,
  LockSummary,
} from '../stores/lock-inspection.interface.js';

/** Writes one line of output. */
export type Print = (line: string) => void;

/** Who a process is: `host:pid`, with its instance id; its process id when unregistered. */
export function ownerText({ process, owner }: LockProcess): string {
  if (!owner) return `? (process ${process}, not registered)`;
  const instance = owner.instanceId === undefined ? '' : ` ${owner.instanceId}`;
  return `${owner.host}:${owner.pid}${instance}`;
}

/** A duration for people: `850ms`, `12.3s`, `4m05s`; `-` for none. */
export function durationText(ms: number): string {
  if (ms < 0) return '-';
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)}s`;
  const seconds = Math.floor(ms / 1_000);
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

/** Rows as aligned columns, two spaces apart; `widths` carries the columns' widths over pages. */
export function tableLines(rows: readonly (readonly string[])[], widths: number[]): string[] {
  for (const row of rows) {
    row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  }
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd(),
  );
}

export const LIST_HEADER = ['KEY', 'KIND', 'HOLDERS', 'TTL', 'HOLDER'];

export function listRow(summary: LockSummary): string[] {
  const holder = summary.holder ? ownerText(summary.holder) : '-';
  const others = summary.holderCount > 1 ? ` (+${summary.holderCount - 1})` : '';
  return [
    summary.key,
    summary.kind,
    String(summary.holderCount),
    durationText(summary.ttl),
    holder + others,
  ];
}

/** `inspect`'s answer as a few lines and two tables: holders, then waiters. */
export function printInspection(found: LockInspection, print: Print): void {
  print(`key      ${found.key}`);
  print(`kind     ${found.kind}${found.limit === undefined ? '' : ` (limit ${found.limit})`}`);
  print(`fence    ${found.fence ?? '-'}`);
  const listed =
    found.holders.length < found.holderCount ? ` (first ${found.holders.length} listed)` : '';
  print(`holders  ${found.holderCount}${listed}`);
  const rows = found.holders.map((holder) => [
    ownerText(holder),
    holder.mode ?? (holder.reserved ? 'turn' : '-'),
    durationText(holder.ttl),
  ]);
  // No SINCE: Redis keeps no time a lease began (a renewal re-arms the same expiry).
  for (const line of tableLines([['  OWNER', 'MODE', 'TTL'], ...indent(rows)], [])) print(line);
  if (found.writerWaiting) print(`writer waiting: ${ownerText(found.writerWaiting)}`);
  if (found.waiters.length === 0) return print('waiters  none in the waiter list');
  print(`waiters  ${found.waiters.length} process(es)`);
  const waiters = found.waiters.map((waiter) => [ownerText(waiter), String(waiter.queues)]);
  for (const line of tableLines([['  OWNER', 'QUEUES'], ...indent(waiters)], [])) print(line);
}

function indent(rows: string[][]): string[][] {
  return rows.map(([first, ...rest]) => [`  ${first}`, ...rest]);
}
