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
  process.exitCode = code;
});
