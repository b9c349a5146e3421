import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, Redis } from 'ioredis';
import { freePort } from '../../tools/redis-launcher.js';
import {
  ensureRedisInstalled,
  launchRedis,
  type LaunchedRedis,
} from '../../tools/redis-launcher.js';

export type Backend = 'redis' | 'cluster' | 'redlock';

/** The servers the demo starts die with it, even of kill -9 (where Linux allows). */
const DIES_WITH_DEMO = { diesWithParent: true };

/** The Redis deployment one demo run uses, and the sample app's environment for it. */
export interface Topology {
  readonly description: string;
  /** LOCK_BACKEND, REDIS_URL, REDIS_CLUSTER_NODES, REDLOCK_URLS for the app instances. */
  readonly env: Record<string, string>;
  /** A client on the product data, for the audit. */
  connectData(): Redis | Cluster;
  stop(): Promise<void>;
}

/** Starts what the backend needs on free loopback ports, or uses REDIS_URL for `redis`. */
export async function provideTopology(
  backend: Backend,
  log: (line: string) => void,
): Promise<Topology> {
  if (backend === 'redis' && process.env.REDIS_URL) {
    const url = process.env.REDIS_URL;
    return {
      description: url,
      env: { LOCK_BACKEND: 'redis', REDIS_URL: url },
      connectData: () => new Redis(url),
      stop: async () => undefined,
    };
  }
  ensureRedisInstalled(log);
  if (backend === 'cluster') return startCluster();
  const servers = await Promise.all(
    Array.from({ length: backend === 'redlock' ? 4 : 1 }, () => launchRedis([], DIES_WITH_DEMO)),
  );
  const [data, ...masters] = servers;
  const env = {
    LOCK_BACKEND: backend,
    REDIS_URL: data.url,
    REDLOCK_URLS: masters.map((m) => m.url).join(','),
  };
  const description =
    backend === 'redlock'
      ? `data on ${data.url}, Redlock over ${masters.map((m) => m.url).join(', ')}`
      : data.url;
  return { description, env, connectData: () => new Redis(data.url), stop: () => stopAll(servers) };
}

/** Three cluster-enabled masters, joined with `redis-cli --cluster create`. */
async function startCluster(): Promise<Topology> {
  const dir = mkdtempSync(join(tmpdir(), 'seckill-cluster-'));
  const nodes: LaunchedRedis[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      // The bus port defaults to port + 10000, which can pass 65535 for high free ports.
      const busPort = await freePort();
      nodes.push(
        await launchRedis(
          [
            '--cluster-enabled',
            'yes',
            '--cluster-port',
            String(busPort),
            '--cluster-config-file',
            join(dir, `nodes-${i}.conf`),
            '--cluster-node-timeout',
            '2000',
          ],
          DIES_WITH_DEMO,
        ),
      );
    }
    const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-yes'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (create.status !== 0)
      throw new Error(`redis-cli --cluster create failed:\n${create.stdout}${create.stderr}`);
    await waitForClusterOk(nodes);
  } catch (error) {
    await stopAll(nodes);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const seeds = nodes.map((node) => ({ host: '127.0.0.1', port: node.port }));
  return {
    description: `Redis Cluster of 3 masters on ${nodes.map((node) => node.port).join(', ')}`,
    env: {
      LOCK_BACKEND: 'cluster',
      REDIS_CLUSTER_NODES: seeds.map((s) => `${s.host}:${s.port}`).join(','),
    },
    connectData: () => new Cluster(seeds),
    stop: async () => {
      await stopAll(nodes);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `redis-cli --cluster create` returns before every node agrees the cluster is up. */
async function waitForClusterOk(nodes: readonly LaunchedRedis[]): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const states = nodes.map(
      (node) =>
        spawnSync('redis-cli', ['-p', String(node.port), 'cluster', 'info'], { encoding: 'utf8' })
          .stdout,
    );
    if (states.every((state) => state.includes('cluster_state:ok'))) return;
    await sleep(100);
  }
  throw new Error('the demo cluster did not reach cluster_state:ok within 20 s');
}

async function stopAll(servers: readonly LaunchedRedis[]): Promise<void> {
  await Promise.all(servers.map((server) => server.stop()));
}
