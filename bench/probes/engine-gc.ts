/**
 * What the garbage collector costs per uncontended lock at C workers (`--c 8` by default), for
 * raw and for the library (`LockService`), each alone in a child process started with
 * `--trace-gc` (a collector's work is shared by everything in its process, so contenders
 * must not share one). Each child runs 1.5 s of warm-up, then 4 s measured; the children take
 * turns, ROUNDS times each (2 by default), against one redis-server.
 * Figures from the trace of the measured seconds: cycles/s; young-generation collections
 * (scavenges) per second and their ms per second; MB moved to the old generation per
 * scavenge (the heap's growth from one scavenge to the next); full collections
 * (mark-compact) per second and their ms per second, incremental marking steps included.
 * Run: `npm run build && node --import tsx bench/probes/engine-gc.ts [--c 8]`
 * (starts its own redis-server unless REDIS_URL is set).
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createContender } from '../contenders/index.js';
import { openRedisTarget } from '../redis-target.js';
import { cycleUncontended } from './uncontended-cycles.js';

const CALLERS = Number(process.argv[process.argv.indexOf('--c') + 1] || 8) || 8;
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const WARM_MS = 1_500;
const MEASURE_MS = 4_000;
const CONTENDERS = ['raw', 'library'] as const;
/** Marks the measured seconds in the child's output, between the GC trace lines. */
const START = 'engine-gc: measuring';

interface GcFigures {
  cyclesPerSec: number;
  scavengesPerSec: number;
  scavengeMsPerSec: number;
  promotedMbPerScavenge: number;
  fullPerSec: number;
  fullMsPerSec: number;
}

const child = process.env.ENGINE_GC_CHILD;
if (child) await runChild(child as (typeof CONTENDERS)[number]);
else await runParent();

async function runChild(name: (typeof CONTENDERS)[number]): Promise<void> {
  const contender = await createContender(name, process.env.ENGINE_GC_URL!, 'defaults');
  await cycleUncontended(contender, CALLERS, WARM_MS, 'gc');
  console.log(START);
  const cycles = await cycleUncontended(contender, CALLERS, MEASURE_MS, 'gc');
  console.log(`engine-gc: cycles ${cycles}`);
  await contender.close();
}

async function runParent(): Promise<void> {
  const target = await openRedisTarget(() => undefined);
  const runs = new Map<string, GcFigures[]>(CONTENDERS.map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of CONTENDERS) runs.get(name)!.push(await measure(name, target.url));
  }
  console.log(`C = ${CALLERS}, ${MEASURE_MS / 1000} s per run, ${ROUNDS} runs per contender`);
  console.log(
    'contender  cycles/s  scavenges/s  scavenge ms/s  MB promoted/scavenge  full GCs/s  full ms/s',
  );
  for (const [name, figures] of runs) {
    for (const f of figures) {
      console.log(
        `${name.padEnd(9)} ${f.cyclesPerSec.toFixed(0).padStart(9)} ${f.scavengesPerSec.toFixed(1).padStart(12)} ` +
          `${f.scavengeMsPerSec.toFixed(1).padStart(14)} ${f.promotedMbPerScavenge.toFixed(2).padStart(21)} ` +
          `${f.fullPerSec.toFixed(2).padStart(11)} ${f.fullMsPerSec.toFixed(1).padStart(10)}`,
      );
    }
  }
  await target.close();
}

async function measure(name: string, url: string): Promise<GcFigures> {
  const worker = fork(fileURLToPath(import.meta.url), process.argv.slice(2), {
    env: { ...process.env, ENGINE_GC_CHILD: name, ENGINE_GC_URL: url },
    execArgv: ['--import', 'tsx', '--trace-gc'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  let output = '';
  worker.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(worker, 'exit')) as [number];
  if (code !== 0) throw new Error(`engine-gc: the ${name} child exited with ${code}`);
  return readTrace(output.slice(output.indexOf(START)));
}

/** Reads `--trace-gc` lines: `Scavenge 41.0 (61.5) -> 29.8 (62.0) MB, 2.31 / 0.01 ms ...`. */
function readTrace(trace: string): GcFigures {
  const seconds = MEASURE_MS / 1000;
  const cycles = Number(/engine-gc: cycles (\d+)/.exec(trace)?.[1]);
  const line =
    /(Scavenge|Mark-Compact)\S* [\d.]+ \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB, ([\d.]+) \/[^\n]*/g;
  let scavenges = 0;
  let scavengeMs = 0;
  let promoted = 0;
  let steps = 0;
  let full = 0;
  let fullMs = 0;
  let lastAfter: number | undefined;
  for (const [text, kind, after, ms] of trace.matchAll(line)) {
    if (kind === 'Scavenge') {
      scavenges++;
      scavengeMs += Number(ms);
      // Few objects here live through one scavenge and not the next (8 locks in flight), so
      // what the heap grew by from one scavenge to the next was moved to the old generation.
      if (lastAfter !== undefined) {
        promoted += Math.max(0, Number(after) - lastAfter);
        steps++;
      }
      lastAfter = Number(after);
    } else {
      full++;
      fullMs += Number(ms) + Number(/\+ ([\d.]+) ms in/.exec(text)?.[1] ?? 0);
      lastAfter = undefined;
    }
  }
  return {
    cyclesPerSec: cycles / seconds,
    scavengesPerSec: scavenges / seconds,
    scavengeMsPerSec: scavengeMs / seconds,
    promotedMbPerScavenge: promoted / Math.max(1, steps),
    fullPerSec: full / seconds,
    fullMsPerSec: fullMs / seconds,
  };
}
