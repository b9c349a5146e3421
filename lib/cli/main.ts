#!/usr/bin/env node
/**
 * The admin CLI, `npx nestjs-distributed-lock`: list, inspect and force-release locks on a
 * Redis the application locks on. See docs/inspection.md and cli-run.ts.
 */
import { runCli } from './cli-run.js';

runCli(process.argv.slice(2), process.env, {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
}).then((code) => {
  // Exits now, once what was printed is written: nothing ioredis may still hold (a timer, a
  // socket being closed) can make the run outlast --timeout.
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
});
