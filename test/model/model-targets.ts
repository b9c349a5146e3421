/** The stores the checker runs against, each with the keys and faults that fit it. */
import { ClusterBackend } from './cluster-backend.js';
import { ChildService, type ChildPool } from './child-service.js';
import type { KeySpace } from './model-commands.js';
import { MemoryBackend, RedisBackend, type Backend } from './model-backend.js';
import { LocalService } from './local-service.js';
import type { ServiceFactory } from './model-world.js';

export interface Target {
  readonly name: string;
  readonly keys: KeySpace;
  /** Services may run in child processes (SIGKILL, SIGSTOP). */
  readonly children: boolean;
  start(): Promise<Backend>;
}

const plainKeys: KeySpace = { groups: [['a', 'b', 'c']] };

export const TARGETS: readonly Target[] = [
  { name: 'redis', keys: plainKeys, children: true, start: () => RedisBackend.start() },
  {
    name: 'cluster',
    // Two hash tags: multi-key locks stay in one slot, and locks spread over two masters.
    keys: {
      groups: [
        ['{x}a', '{x}b'],
        ['{y}a', '{y}b'],
      ],
    },
    children: false,
    start: () => ClusterBackend.start(),
  },
  { name: 'memory', keys: plainKeys, children: false, start: async () => new MemoryBackend() },
];

export function targetNamed(name: string): Target {
  const target = TARGETS.find((candidate) => candidate.name === name);
  if (!target)
    throw new Error(`no target "${name}"; targets: ${TARGETS.map((t) => t.name).join(', ')}`);
  return target;
}

/** Builds each service of a run where its setup says: here, or in a child process. */
export function serviceFactory(backend: Backend, pool: ChildPool): ServiceFactory {
  return async (svc, setup, emit) => {
    if (setup.child)
      return ChildService.start(svc, setup, backend.link(svc), backend.probePorts(), emit, pool);
    const service = new LocalService(svc, setup, backend.link(svc), backend.probe, emit);
    await service.start();
    return service;
  };
}
