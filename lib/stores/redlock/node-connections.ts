import type { RedisClientPort } from '../redis/redis-client.port.js';
import { ConnectionState } from '../redis/connection-state.js';

/**
 * The connections of the Redlock nodes, as far as a quorum is concerned. Clients the user made
 * just before handing them over are still connecting, and one without an offline queue fails
 * every command until it is ready: an attempt sent then would miss a quorum it is about to have.
 * A node known down is never waited for.
 */
export class NodeConnections {
  private readonly states: ConnectionState[];
  private disposed = false;

  constructor(ports: readonly RedisClientPort[]) {
    this.states = ports.map((port) => new ConnectionState(port));
  }

  /** Which nodes are still connecting, as a call is sent: its failures there say little. */
  connectingNow(): boolean[] {
    return this.states.map((state) => state.connecting);
  }

  /**
   * A call (`answers`, in node order) missed `quorum` only for nodes it found connecting
   * (`connecting`, from `connectingNow`) that are not known down since: ready by now, or soon.
   */
  missedWhileConnecting(
    quorum: number,
    answers: readonly { readonly ok: boolean }[],
    connecting: readonly boolean[],
  ): boolean {
    let reached = 0;
    let pending = 0;
    answers.forEach((answer, i) => {
      if (answer.ok) reached++;
      else if (connecting[i] && !this.states[i].down) pending++;
    });
    return reached < quorum && reached + pending >= quorum;
  }

  /**
   * Resolves once `quorum` nodes are ready, or once too few are ready or connecting to make it,
   * or after `timeoutMs`: whichever comes first. At once in the usual case, all nodes ready.
   */
  quorumSettled(quorum: number, timeoutMs: number): Promise<void> {
    return this.waitWhile(() => this.awaitingQuorum(quorum), timeoutMs);
  }

  /** Resolves once no node is still connecting, or after `timeoutMs`. */
  allSettled(timeoutMs: number): Promise<void> {
    return this.waitWhile(() => this.states.some((state) => state.connecting), timeoutMs);
  }

  /** Fewer than `quorum` nodes are ready, and enough are connecting to make it up. */
  awaitingQuorum(quorum: number): boolean {
    let ready = 0;
    let connecting = 0;
    for (const state of this.states) {
      if (state.ready) ready++;
      else if (state.connecting) connecting++;
    }
    return ready < quorum && ready + connecting >= quorum;
  }

  /** Stops following the clients, and lets go of anyone waiting on them. */
  dispose(): void {
    this.disposed = true;
    for (const state of this.states) state.dispose();
  }

  /** Waits, a connection settling at a time, while `pending` holds; at most `timeoutMs`. */
  private async waitWhile(pending: () => boolean, timeoutMs: number): Promise<void> {
    if (!pending()) return;
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(() => ((timedOut = true), resolve()), timeoutMs);
      timer.unref();
    });
    try {
      while (!timedOut && !this.disposed && pending()) {
        const connecting = this.states.filter((state) => state.connecting);
        await Promise.race([timeout, ...connecting.map((state) => state.whenConnected())]);
      }
    } finally {
      clearTimeout(timer);
    }
  }
}
