import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { reportFigures } from '../harness/figures.js';
import { waitUntil } from '../harness/waits.js';

/** A process, named by pid and start time (a pid reused by another process is not it). */
interface Proc {
  readonly pid: number;
  readonly start: string;
  readonly command: string;
}

/** /proc/<pid>/stat: parent, start time and state; undefined once the process is gone. */
function statOf(pid: number): { ppid: number; start: string; state: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name, which may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], ppid: Number(fields[1]), start: fields[19] };
  } catch {
    return undefined;
  }
}

/** `root` and every process under it. */
function tree(root: number): Proc[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = statOf(Number(name));
    if (stat) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), Number(name)]);
  }
  const found: Proc[] = [];
  for (const pids = [root]; pids.length > 0;) {
    const pid = pids.shift()!;
    const stat = statOf(pid);
    if (!stat) continue;
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    found.push({ pid, start: stat.start, command });
    pids.push(...(children.get(pid) ?? []));
  }
  return found;
}

/** Still running: the same process (start time), and not a zombie waiting to be reaped. */
function running(proc: Proc): boolean {
  const stat = statOf(proc.pid);
  return stat !== undefined && stat.start === proc.start && stat.state !== 'Z';
}

type Action =
  | 'SIGTERM to npm'
  | "SIGTERM to npm's shell"
  | 'SIGTERM to the launcher'
  | 'SIGINT to the group'
  | 'kill -9 of the launcher';

const COMMANDS = {
  // A sale that outlasts the test: the signal comes while it runs.
  seckill: {
    launcher: 'seckill-demo.js',
    args: ['--users', '1000000', '--concurrency', '6'],
    ready: /3 app instances: /,
  },
  'seckill:live': { launcher: 'seckill-live.js', args: [], ready: /Live page: / },
} as const;

/** Every case's deadline for the whole tree to be gone: instances get 3 s to close, then SIGKILL. */
const GONE_WITHIN_MS = 15_000;

describe('the seckill commands end everything they started', () => {
  const started: Proc[] = [];
  let npm: ChildProcess | undefined;

  afterEach(() => {
    // Only if a case failed: what it started is killed, by pid, and nothing else.
    for (const proc of started.splice(0)) if (running(proc)) process.kill(proc.pid, 'SIGKILL');
    npm = undefined;
  });

  /** `npm run <script>` (built already: --ignore-scripts skips the pre-script's build). */
  async function launch(script: keyof typeof COMMANDS): Promise<Proc[]> {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.REDIS_URL; // the demo would use it instead of starting its own Redis
    const child = spawn(
      'npm',
      ['run', script, '--ignore-scripts', '--', ...COMMANDS[script].args],
      {
        // Its own process group, as a terminal gives a command: Ctrl-C is SIGINT to the group.
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env,
      },
    );
    npm = child;
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // Redis and 3 instances under the launcher, listening: it said so.
    const procs = await waitUntil(
      `npm run ${script} to start Redis and 3 instances`,
      () => {
        if (child.exitCode !== null) throw new Error(`npm run ${script} exited:\n${output}`);
        if (!COMMANDS[script].ready.test(output)) return false;
        const procs = tree(child.pid!);
        const redis = procs.filter((proc) => proc.command.startsWith('redis-server'));
        const instances = procs.filter((proc) => proc.command.endsWith('src/main.js'));
        return redis.length >= 1 && instances.length === 3 && procs;
      },
      30_000,
      100,
    );
    started.push(...procs);
    return procs;
  }

  function act(action: Action, procs: Proc[], script: keyof typeof COMMANDS): void {
    // npm runs `node <launcher>` in a shell (sh -c), whose command line names it too.
    const [shell, launcher] = ['sh ', 'node '].map((start) =>
      procs.find(
        (proc) =>
          proc.command.startsWith(start) && proc.command.includes(COMMANDS[script].launcher),
      )!,
    );
    if (action === 'SIGTERM to npm') process.kill(npm!.pid!, 'SIGTERM');
    else if (action === "SIGTERM to npm's shell") process.kill(shell.pid, 'SIGTERM');
    else if (action === 'SIGTERM to the launcher') process.kill(launcher.pid, 'SIGTERM');
    else if (action === 'SIGINT to the group') process.kill(-npm!.pid!, 'SIGINT');
    else process.kill(launcher.pid, 'SIGKILL');
  }

  describe.each(Object.keys(COMMANDS) as (keyof typeof COMMANDS)[])('npm run %s', (script) => {
    it.each<Action>([
      'SIGTERM to npm',
      "SIGTERM to npm's shell",
      'SIGTERM to the launcher',
      'SIGINT to the group',
      'kill -9 of the launcher',
    ])(
      '%s leaves nothing it started running',
      async (action) => {
        const procs = await launch(script);
        const signalled = performance.now();
        act(action, procs, script);
        const gone = (): boolean => procs.every((proc) => !running(proc));
        await waitUntil(`${action}: every process to end`, gone, GONE_WITHIN_MS, 50).catch(() => {
          const left = procs.filter(running).map((proc) => `${proc.pid} ${proc.command}`);
          throw new Error(`${action} left running:\n${left.join('\n')}`);
        });
        reportFigures(`npm run ${script}, ${action}`, {
          processes: procs.length,
          goneMs: Math.round(performance.now() - signalled),
        });
      },
      60_000,
    );
  });
});
