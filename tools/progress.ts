/**
 * Progress for the long commands (the bench, the seckill demos). On a terminal, one status line
 * is rewritten in place under the log; anywhere else (CI logs, pipes) everything is plain lines,
 * and a task's percentage is printed only at each quarter, so a log stays short.
 */

/** The part of a stream this needs; `isTTY` decides between rewriting and plain lines. */
export interface ProgressStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(text: string): unknown;
}

export interface ProgressOptions {
  /** Where the status goes: the stream the command logs to. */
  readonly stream?: ProgressStream;
  /**
   * Without a terminal, `update` prints at each quarter (`quarters`) or not at all (`none`),
   * for commands whose own log lines already tell the progress.
   */
  readonly plainUpdates?: 'quarters' | 'none';
}

const CLEAR_LINE = '\r\x1b[2K';
const BAR_WIDTH = 20;

export class Progress {
  private readonly stream: ProgressStream;
  private readonly tty: boolean;
  private readonly plainUpdates: 'quarters' | 'none';
  /** The status line now on screen (terminal only). */
  private status = '';
  private lastQuarter = 0;
  private lastLabel = '';

  constructor(options: ProgressOptions = {}) {
    this.stream = options.stream ?? process.stderr;
    this.tty = this.stream.isTTY === true;
    this.plainUpdates = options.plainUpdates ?? 'quarters';
  }

  /** Starts a step: a line of its own, in both modes; the last step's status line goes. */
  step(text: string): void {
    this.lastQuarter = 0;
    this.end();
    this.log(text);
  }

  /** Reports `done` of `total` for the task `label`: a bar on a terminal, quarters elsewhere. */
  update(label: string, done: number, total: number): void {
    const percent = total > 0 ? Math.min(100, Math.floor((100 * done) / total)) : 100;
    if (this.tty) return this.show(`${label} ${bar(percent)} ${done}/${total}`);
    if (this.plainUpdates === 'none') return;
    if (label !== this.lastLabel) this.lastQuarter = 0;
    this.lastLabel = label;
    const quarter = Math.floor(percent / 25);
    if (quarter <= this.lastQuarter) return;
    this.lastQuarter = quarter;
    this.stream.write(`${label} ${percent}% (${done}/${total})\n`);
  }

  /**
   * Writes a line of the command's own output, to `to` (default: the progress stream), with
   * the status line taken down first and put back after, so the two never mix on one line.
   */
  log(line: string, to: ProgressStream = this.stream): void {
    const status = this.status;
    this.show('');
    to.write(`${line}\n`);
    this.show(status);
  }

  /** Takes the status line down, leaving the terminal as the command's own output left it. */
  end(): void {
    this.show('');
  }

  private show(text: string): void {
    if (!this.tty || text === this.status) return;
    // A line longer than the terminal wraps, and `\r` would then rewrite only its last row.
    const width = Math.max(20, (this.stream.columns || 80) - 1);
    this.stream.write(`${CLEAR_LINE}${text.slice(0, width)}`);
    this.status = text;
  }
}

export function bar(percent: number): string {
  const filled = Math.round((percent / 100) * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${String(percent).padStart(3)}%`;
}
