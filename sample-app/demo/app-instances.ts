import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dyingWithParent } from '../../tools/parent-death.js';
import { freePort, stopChild, type LaunchOptions } from '../../tools/redis-launcher.js';

/** The compiled app, next to this file's compiled copy (`sample-app/dist/sample-app/`). */
export const compiledMain = fileURLToPath(new URL('../src/main.js', import.meta.url));

/** A sample app process on its own port. */
export interface AppInstance {
  readonly url: string;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `count` sample app processes and resolves once each is listening; none is left behind on failure. */
export async function startInstances(
  count: number,
  env: Record<string, string>,
  mainScript = compiledMain,
  options: LaunchOptions = {},
): Promise<AppInstance[]> {
  const started = await Promise.allSettled(
    Array.from({ length: count }, () => startInstance(env, mainScript, options)),
  );
  const instances = started.flatMap((result) =>
    result.status === 'fulfilled' ? [result.value] : [],
  );
  const failure = started.find((result) => result.status === 'rejected');
  if (!failure) return instances;
  await Promise.all(instances.map((instance) => instance.stop()));
  throw failure.reason;
}

export async function startInstance(
  env: Record<string, string>,
  mainScript = compiledMain,
  { diesWithParent = false }: LaunchOptions = {},
): Promise<AppInstance> {
  const port = await freePort();
  const [command, args] = diesWithParent
    ? dyingWithParent(process.execPath, [mainScript])
    : [process.execPath, [mainScript]];
  const child = spawn(command, args, {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`sample app did not start listening within 30 s:\n${output}`));
    }, 30_000);
    const collect = (chunk: Buffer): void => {
      output += chunk.toString();
      if (!output.includes('listening on')) return;
      clearTimeout(timer);
      resolve();
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sample app exited with ${code} before listening:\n${output}`));
    });
  });
  return { url: `http://127.0.0.1:${port}`, process: child, stop: () => stopChild(child) };
}
