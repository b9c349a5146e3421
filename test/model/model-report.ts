/** A failure as the runner prints it: the shrunk sequence, and a test case ready to paste. */
import { describeOp } from './model-ops.js';
import type { Failure } from './model-session.js';

export function printFailure(failure: Failure): void {
  const { target, seed, path, setup, ops } = failure;
  if (!failure.shrunk) {
    console.log(`FAIL ${target} seed=${seed} path=${path} again: ${failure.kind} (not shrunk)`);
    return;
  }
  const lines = [
    `FAIL ${target} seed=${seed} path=${path}: ${failure.kind}`,
    `  ${failure.error.split('\n').join('\n  ')}`,
    `  shrunk sequence (${ops.length} ops, setup ${JSON.stringify(setup)}):`,
    ...ops.map((op) => `    ${describeOp(op)}`),
    `    (fast-check: ${failure.sequence.match(/\/\*.*\*\//)?.[0] ?? ''})`,
    `  replay: npm run test:model -- --target ${target} --seed ${seed} --path ${path}`,
    '  as a test (test/model/replays/<name>.spec.ts):',
    "    import { replaySteps } from '../model-replay.js';",
    `    it('model ${target} seed ${seed}', () =>`,
    `      replaySteps('${target}', ${JSON.stringify(setup)}, [`,
    ...ops.map((op) => `        ${JSON.stringify(op)},`),
    '      ]), 120_000);',
  ];
  console.log(lines.join('\n'));
}
