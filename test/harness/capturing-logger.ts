import type { LoggerService } from '@nestjs/common';

/** One line the app logged: its level and text. */
export interface LogLine {
  readonly level: 'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal';
  readonly text: string;
}

/** A Nest logger that keeps every line, for tests that count what an operator would read. */
export class CapturingLogger implements LoggerService {
  readonly lines: LogLine[] = [];
  log = (message: unknown): void => this.keep('log', message);
  error = (message: unknown, ...rest: unknown[]): void => this.keep('error', message, rest);
  warn = (message: unknown): void => this.keep('warn', message);
  debug = (message: unknown): void => this.keep('debug', message);
  verbose = (message: unknown): void => this.keep('verbose', message);
  fatal = (message: unknown): void => this.keep('fatal', message);

  /** Lines at `level` (and above, for 'warn'), leaving out Nest's own start-up chatter. */
  at(level: 'error' | 'warn'): LogLine[] {
    const levels = level === 'error' ? ['error', 'fatal'] : ['error', 'fatal', 'warn'];
    return this.lines.filter((line) => levels.includes(line.level));
  }

  private keep(level: LogLine['level'], message: unknown, rest: unknown[] = []): void {
    const text = [message, ...rest]
      .map((part) => (part instanceof Error ? `${part.stack}` : String(part)))
      .join(' ');
    this.lines.push({ level, text });
  }
}
