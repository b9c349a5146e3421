/**
 * Replays a printed failure: its ops against a fresh target, judged by the same invariants.
 * Throws the violation it finds; for a pasted regression test.
 */
import { ChildPool } from './child-service.js';
import { Step } from './model-commands.js';
import type { Op, RunSetup } from './model-ops.js';
import { runSteps } from './model-session.js';
import { targetNamed } from './model-targets.js';

export async function replaySteps(
  target: string,
  setup: RunSetup,
  ops: readonly Op[],
): Promise<void> {
  const backend = await targetNamed(target).start();
  const pool = new ChildPool();
  try {
    await runSteps(
      backend,
      pool,
      setup,
      ops.map((op) => new Step(op)),
    );
  } finally {
    await pool.close();
    await backend.stop();
  }
}
