/**
 * Compares builds of the library on uncontended locks at C workers (`--c 8` by default), each
 * build alone in a child process, against raw in a child of its own. In one process, two
 * builds share a heap, a JIT and a garbage collector, and the copy loaded second runs slower
 * whatever its code; apart, neither pays for the other.
 * The children take turns in blocks of 300 ms, in an order rotated every round (ROUNDS=40 by
 * default, after 2 unmeasured). Figures: median cycles/s; × raw, the median over the rounds
 * of each block's speed against raw's block of the same round; the main thread's median share
 * of the wall time (`/proc`, 10 ms ticks), which shows a client left waiting on Redis.
 * Run: `npm run build && node --import tsx bench/probes/builds-apart.ts [--c 8] [dir ...]`,
 * where each dir is a copy of `dist` with a `package.json` of `{"type":"module"}` in it, as
 * the repo has. Without it, tsx compiles the copy again and wraps its named closures in
 * `__name` calls, some of them made per lock, so the copy is no longer the build it was.
 * No dir: the repo's own `dist`. Starts its own redis-server unless REDIS_URL is set.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createContender, type Contender } from '../contenders/index.js';
import { createLibrary, type LibraryBuild } from '../contenders/library.js';
import { openRedisTarget } from '../redis-target.js';
import { median } from '../stats.js';
import { mainThreadCpuMs } from './main-thread-cpu.js';
import { cycleUncontended } from './uncontended-cycles.js';

const CALLERS = Number(process.argv[process.argv.indexOf('--c') + 1] || 8) || 8;
const ROUNDS = Number(process.env.ROUNDS ?? 40);
const BLOCK_MS = 300;
const WARM_ROUNDS = 2;

/** What a child answers for one block: cycles/s and the main thread's busy share. */
type BlockFigures = [cyclesPerSec: number, busy: number];

const child = process.env.BUILDS_APART_CHILD;
if (child !== undefined) await runChild(child, process.env.BUILDS_APART_URL!);
else await runParent(buildDirs());

/** The build directories named on the command line (arguments that are not `--c N`). */
function buildDirs(): string[] {
  const args = process.argv.slice(2);
  const at = args.indexOf('--c');
  if (at >= 0) args.splice(at, 2);
  return args.length > 0 ? args.map((dir) => resolve(dir)) : [''];
}

async function runParent(dirs: string[]): Promise<void> {
  const target = await openRedisTarget(() => undefined);
  const names = ['raw', ...dirs.map((dir) => (dir ? basename(dir) : 'library'))];
  const children = ['raw', ...dirs].map((who) => start(who, target.url));
  await Promise.all(children.map((worker) => once(worker, 'message')));
  const blocks = names.map(() => [] as BlockFigures[]);
  for (let round = -WARM_ROUNDS; round < ROUNDS; round++) {
    for (let step = 0; step < children.length; step++) {
      const at = (round + WARM_ROUNDS + step) % children.length;
      children[at].send(BLOCK_MS);
      const [figures] = (await once(children[at], 'message')) as [BlockFigures];
      if (round >= 0) blocks[at].push(figures);
    }
  }
  console.log(`C = ${CALLERS}, ${ROUNDS} rounds of ${BLOCK_MS} ms per contender`);
  console.log(
    `${'contender'.padEnd(16)} ${'cycles/s'.padStart(9)} ${'× raw'.padStart(6)} main busy`,
  );
  for (const [at, name] of names.entries()) {
    const speed = blocks[at].map(([cyclesPerSec]) => cyclesPerSec);
    const ratio = median(speed.map((value, round) => value / blocks[0][round][0]));
    const busy = median(blocks[at].map(([, share]) => share));
    console.log(
      `${name.padEnd(16)} ${median(speed).toFixed(0).padStart(9)} ${ratio.toFixed(3).padStart(6)} ${busy.toFixed(2).padStart(9)}`,
    );
  }
  for (const worker of children) worker.send('stop');
  await Promise.all(children.map((worker) => once(worker, 'exit')));
  await target.close();
}

function start(who: string, url: string): ChildProcess {
  return fork(fileURLToPath(import.meta.url), process.argv.slice(2), {
    env: { ...process.env, BUILDS_APART_CHILD: who, BUILDS_APART_URL: url },
    execArgv: ['--import', 'tsx'],
  });
}

async function runChild(who: string, url: string): Promise<void> {
  const contender = await open(who, url);
  const block = async (ms: number): Promise<BlockFigures> => {
    const cpuBefore = mainThreadCpuMs();
    const startedAt = performance.now();
    const cycles = await cycleUncontended(contender, CALLERS, ms, 'apart');
    const wall = performance.now() - startedAt;
    return [(cycles / wall) * 1000, (mainThreadCpuMs() - cpuBefore) / wall];
  };
  process.on('message', (message: number | 'stop') => {
    if (message === 'stop') void contender.close().then(() => process.exit(0));
    else void block(message).then((figures) => process.send!(figures));
  });
  process.send!('ready');
}

async function open(who: string, url: string): Promise<Contender> {
  if (who === 'raw') return createContender('raw', url, 'defaults');
  if (!who) return createLibrary(url);
  checkModuleScope(who);
  const build = (await import(resolve(who, 'index.js'))) as LibraryBuild;
  return createLibrary(url, build, basename(who));
}

/** A copy of `dist` outside the repo must be an ES module package, as `dist` is inside it. */
function checkModuleScope(dir: string): void {
  const manifest = resolve(dir, 'package.json');
  const type = existsSync(manifest)
    ? (JSON.parse(readFileSync(manifest, 'utf8')) as { type?: string }).type
    : undefined;
  if (type !== 'module') {
    throw new Error(
      `${dir}: add a package.json of {"type":"module"}, or tsx compiles the copy again`,
    );
  }
}
