import { runInThisContext } from 'node:vm';

/**
 * The real `process`. Jest hands each test file a copy of it, and listeners added to the copy
 * never hear `unhandledRejection` or `uncaughtException`; `runInThisContext` evaluates in
 * Node's own context, where the real one lives.
 */
export const realProcess = runInThisContext('process') as NodeJS.Process;
