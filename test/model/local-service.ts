/** A lock service in the checker's own process, on its own connection. */
import { Cluster, Redis } from 'ioredis';
import type { StoreLink } from './model-backend.js';
import type { Op, ServiceSetup } from './model-ops.js';
import type { ServiceReport } from './model-records.js';
import { ServiceDriver } from './service-driver.js';
import { PREFIX, serviceEngine } from './service-engine.js';

/** What the world asks of a service, wherever it runs. */
export interface ServiceHandle {
  readonly svc: number;
  readonly inChild: boolean;
  readonly note?: string;
  run(op: Op): void;
  /** Whether ops it started are still running. */
  busy(): Promise<boolean>;
  audit(): Promise<void>;
  /** Lets running ops end within `graceMs`, then lets go of everything. */
  close(graceMs: number): Promise<void>;
  kill?(): Promise<void>;
  pause?(ms: number): Promise<void>;
}

/** A client as an application would open one: a few retries, errors handled by the library. */
export function openClient(link: StoreLink): Redis | Cluster | undefined {
  if (link.type === 'memory') return undefined;
  // As the ACL user the link names, if any: the checker revokes its grants during a run.
  const auth = link.user ? { username: link.user.name, password: link.user.password } : {};
  const redisOptions = { maxRetriesPerRequest: 1, connectTimeout: 2_000, ...auth };
  const client =
    link.type === 'redis'
      ? new Redis({ host: '127.0.0.1', port: link.port, ...redisOptions })
      : new Cluster(
          link.ports.map((port) => ({ host: '127.0.0.1', port })),
          {
            natMap: link.natMap,
            redisOptions,
            retryDelayOnFailover: 100,
            slotsRefreshTimeout: 1_000,
          },
        );
  client.on('error', () => undefined);
  return client;
}

/** A direct connection for audits, bypassing the service's proxy. */
export function openProbe(ports: readonly number[]): Redis | Cluster | undefined {
  if (ports.length === 0) return undefined;
  return openClient(
    ports.length === 1
      ? { type: 'redis', port: ports[0]! }
      : { type: 'cluster', ports, natMap: {} },
  );
}

export class LocalService implements ServiceHandle {
  readonly inChild = false;
  readonly note?: string;
  private readonly driver: ServiceDriver;
  private readonly client: Redis | Cluster | undefined;

  constructor(
    readonly svc: number,
    setup: ServiceSetup,
    link: StoreLink,
    probe: Redis | Cluster | undefined,
    emit: (report: ServiceReport) => void,
  ) {
    this.client = openClient(link);
    const { engine, note } = serviceEngine(
      this.client ?? (link as Extract<StoreLink, { type: 'memory' }>).store,
      setup,
    );
    this.note = note;
    this.driver = new ServiceDriver(svc, engine, probe, PREFIX, emit);
  }

  /** The app's startup (see `ServiceDriver.start`). */
  start(): Promise<void> {
    return this.driver.start();
  }

  run(op: Op): void {
    this.driver.run(op);
  }

  async busy(): Promise<boolean> {
    return this.driver.busy;
  }

  audit(): Promise<void> {
    return this.driver.audit();
  }

  async close(graceMs: number): Promise<void> {
    await this.driver.close(graceMs);
    this.client?.disconnect();
  }
}
