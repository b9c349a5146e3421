import { ConsoleLogger } from '@nestjs/common';
import { CapturingLogger } from './capturing-logger.js';

/** The context the library logs under when the app gives it no logger of its own. */
const CONTEXT = 'LockModule';
const LEVELS = ['log', 'error', 'warn', 'debug', 'verbose', 'fatal'] as const;

/**
 * The lines the library wrote to Nest's own logger in the running test file: captured here
 * instead of printed, so a test run's console shows only what the tests report. A spec that
 * checks what an operator reads passes a `CapturingLogger` of its own, or reads this one.
 */
export const lockModuleLog = new CapturingLogger();

/**
 * Routes `[LockModule]` lines of every Nest console logger (the default one, and
 * `@nestjs/testing`'s, which prints errors) to `lockModuleLog`; other contexts still print.
 * Goes through the loggers' public methods, whose last argument is the context.
 */
export function captureLockModuleLogs(): void {
  for (const level of LEVELS) {
    const print = ConsoleLogger.prototype[level];
    ConsoleLogger.prototype[level] = function (
      this: ConsoleLogger,
      message: unknown,
      ...rest: unknown[]
    ): void {
      if (rest.at(-1) !== CONTEXT) return print.call(this, message, ...rest);
      lockModuleLog[level](message, ...rest.slice(0, -1).filter((part) => part !== undefined));
    };
  }
}
