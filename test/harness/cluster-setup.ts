import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { isFailing, parseClusterNodes, slotOwner } from './cluster-nodes.js';
import { infoOf, parseInfo, tryAdminCall } from './redis-admin.js';

/** redis-server arguments for one cluster node whose files live in `dir`. */
export function clusterNodeArgs(dir: string, port: number, busPort: number, nodeTimeoutMs: number) {
  return [
    ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
    // Explicit bus port: the default (port + 10000) may be taken, or exceed 65535.
    ...['--cluster-enabled', 'yes', '--cluster-port', String(busPort)],
    ...['--cluster-config-file', join(dir, `nodes-${port}.conf`)],
    ...['--cluster-node-timeout', String(nodeTimeoutMs)],
    // A replica may always take over, however stale; tests kill masters on purpose.
    ...['--cluster-replica-validity-factor', '0'],
    ...['--save', '', '--appendonly', 'no'],
    // The 7.0 default waits 5 s before a diskless full sync to a new replica.
    ...['--repl-diskless-sync-delay', '0'],
  ];
}

/** `redis-cli --cluster create`, never prompting: --cluster-yes and no stdin. */
export async function createCluster(ports: number[], replicasPerMaster: number): Promise<void> {
  const args = ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`)];
  args.push('--cluster-replicas', String(replicasPerMaster), '--cluster-yes');
  const cli = spawn('redis-cli', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  cli.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  cli.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => cli.kill('SIGKILL'), 20_000);
  const code = await new Promise((resolve) => cli.once('close', (exitCode) => resolve(exitCode)));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`redis-cli --cluster create failed (${code}):\n${output}`);
}

/**
 * True when every node on `ports` says cluster_state:ok with all slots served, knows all
 * `ports.length` nodes, and `replicas` of them are replicas with a live link to their master.
 */
export async function isClusterHealthy(ports: number[], replicas: number): Promise<boolean> {
  const states = await Promise.all(
    ports.map(async (port) => ({
      cluster: parseInfo(await tryAdminCall(port, ['CLUSTER', 'INFO'])),
      replication: await infoOf(port, 'replication'),
    })),
  );
  const attached = states.filter(
    ({ replication }) => replication?.role === 'slave' && replication.master_link_status === 'up',
  );
  return (
    attached.length === replicas &&
    states.every(
      ({ cluster }) =>
        cluster.cluster_state === 'ok' &&
        cluster.cluster_slots_ok === '16384' &&
        cluster.cluster_known_nodes === String(ports.length),
    )
  );
}

/**
 * The port that every node on `livePorts` names as the slot's (non-failing) master, provided
 * it is one of them and all say cluster_state:ok; undefined while a failover is under way.
 */
export async function agreedSlotOwner(livePorts: number[], slot: number) {
  const owners = new Set<number>();
  for (const port of livePorts) {
    const state = parseInfo(await tryAdminCall(port, ['CLUSTER', 'INFO'])).cluster_state;
    const view = parseClusterNodes(await tryAdminCall(port, ['CLUSTER', 'NODES']));
    const owner = slotOwner(view, slot);
    if (state !== 'ok' || !owner || isFailing(owner)) return undefined;
    owners.add(owner.port);
  }
  const [port] = owners;
  return owners.size === 1 && livePorts.includes(port!) ? port : undefined;
}
