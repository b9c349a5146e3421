import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpus, loadavg } from 'node:os';

/** Where and on what a run happened, so its figures can be compared with another's. */
export interface RunMeta {
  readonly command: string;
  readonly startedAt: string;
  readonly nproc: number;
  readonly cpu: string;
  readonly node: string;
  redis: string;
  readonly loadAverageStart: string;
  loadAverageEnd?: string;
  /** The busiest other processes at start: the noise these figures carry. */
  readonly busiestAtStart: readonly string[];
  readonly gitCommit: string;
  /** Hash of `git diff HEAD -- lib`, to tell apart runs of different uncommitted library code. */
  readonly libDiff: string;
  scriptCommandsCounted?: boolean;
  selfTest?: { sections: number; overlaps: number };
  durationSec?: number;
}

export function collectMeta(argv: readonly string[]): RunMeta {
  const args = argv.length ? ` -- ${argv.join(' ')}` : '';
  return {
    command: `npm run bench${args}`,
    startedAt: new Date().toISOString(),
    nproc: Number(run('nproc', [])) || cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    redis: 'unknown',
    loadAverageStart: formatLoad(),
    busiestAtStart: busiest(),
    gitCommit: run('git', ['rev-parse', '--short', 'HEAD']) || 'unknown',
    libDiff: libDiffHash(),
  };
}

export function formatLoad(): string {
  return loadavg()
    .map((load) => load.toFixed(2))
    .join(', ');
}

function libDiffHash(): string {
  const diff = run('git', ['diff', 'HEAD', '--', 'lib']);
  if (!diff) return 'clean';
  return `uncommitted changes, diff sha1 ${createHash('sha1').update(diff).digest('hex').slice(0, 10)}`;
}

/** Processes using the CPU right now (top's second frame: its first averages since boot). */
function busiest(): string[] {
  const output = run('top', ['-b', '-c', '-n', '2', '-d', '0.5', '-o', '%CPU', '-w', '200']);
  const lastFrame = output.slice(output.lastIndexOf('\ntop -'));
  const lines = lastFrame.split('\n');
  const header = lines.findIndex((line) => /^\s*PID\s/.test(line));
  const ours = new Set([process.pid, process.ppid]);
  return lines
    .slice(header + 1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields.length > 11 && !ours.has(Number(fields[0])) && fields[11] !== 'top')
    .filter((fields) => Number(fields[8]) >= 1)
    .slice(0, 8)
    .map((fields) => `${fields[8]}% ${fields.slice(11).join(' ')}`.slice(0, 110));
}

function run(command: string, args: readonly string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .trim()
      .toString();
  } catch {
    return '';
  }
}
