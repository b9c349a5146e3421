import { afterPendingIo } from '../after-pending-io.js';
import type { NodeOutcome } from '../lock-store.interface.js';

/*
 * One call to every Redlock node at once, and the answers counted against the quorum.
 */

export type NodeAnswer<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

/** Asks every node at once; each answer is bounded by `timeoutMs` and never rejects. */
export function askAll<N, T>(
  nodes: readonly N[],
  timeoutMs: number,
  call: (node: N) => Promise<T>,
): Promise<NodeAnswer<T>[]> {
  return Promise.all(nodes.map((node) => bounded(call(node), timeoutMs)));
}

function bounded<T>(operation: Promise<T>, timeoutMs: number): Promise<NodeAnswer<T>> {
  return new Promise((resolve) => {
    const timer = setTimeout(
      () => afterPendingIo(() => resolve({ ok: false, error: `no answer within ${timeoutMs} ms` })),
      timeoutMs,
    );
    operation.then(
      (value) => (clearTimeout(timer), resolve({ ok: true, value })),
      (error: unknown) => (
        clearTimeout(timer),
        resolve({ ok: false, error: error instanceof Error ? error.message : String(error) })
      ),
    );
  });
}

/** Per-node detail for errors: which nodes failed and how. */
export function describeNodes(
  names: readonly string[],
  outcomes: readonly NodeOutcome['outcome'][],
  answers: readonly NodeAnswer<unknown>[],
): NodeOutcome[] {
  return names.map((node, i) => {
    const answer = answers[i];
    return answer.ok
      ? { node, outcome: outcomes[i] }
      : { node, outcome: 'failed', error: answer.error };
  });
}
