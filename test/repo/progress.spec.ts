import { Progress, type ProgressStream } from '../../tools/progress.js';

/** A stream that keeps what was written, as a terminal (`isTTY`) or as a CI log. */
function stream(isTTY: boolean): ProgressStream & { text: string } {
  return {
    isTTY,
    columns: 60,
    text: '',
    write(chunk: string) {
      this.text += chunk;
      return true;
    },
  };
}

describe('tools/progress', () => {
  it('rewrites one status line in place on a terminal, under the log lines', () => {
    const out = stream(true);
    const progress = new Progress({ stream: out });
    progress.step('step 1');
    for (let done = 0; done <= 100; done += 10) progress.update('sale', done, 100);
    progress.log('a log line');
    progress.end();

    expect(out.text).toContain('\r\x1b[2Ksale [##########..........]  50% 50/100');
    // The log line lands on a cleared line and the status comes back after it.
    expect(out.text).toContain('\r\x1b[2Ka log line\n\r\x1b[2Ksale [####################] 100%');
    expect(out.text.endsWith('\r\x1b[2K')).toBe(true);
    expect(out.text.split('\n')).toHaveLength(3);
  });

  it('prints plain lines without a terminal: the steps, and each task at each quarter', () => {
    const out = stream(false);
    const progress = new Progress({ stream: out });
    progress.step('step 1');
    for (let done = 0; done <= 2000; done += 7) progress.update('sale', done, 2000);
    progress.update('sale', 2000, 2000);
    progress.update('next sale', 1000, 2000);
    progress.end();

    expect(out.text).not.toContain('\r');
    expect(out.text).not.toContain('\x1b');
    expect(out.text.trimEnd().split('\n')).toEqual([
      'step 1',
      'sale 25% (504/2000)',
      'sale 50% (1001/2000)',
      'sale 75% (1505/2000)',
      'sale 100% (2000/2000)',
      'next sale 50% (1000/2000)',
    ]);
  });

  it('prints no percentages without a terminal when told the log already tells them', () => {
    const out = stream(false);
    const progress = new Progress({ stream: out, plainUpdates: 'none' });
    progress.step('Scenario 1 (1 of 9)…');
    for (let done = 1; done <= 36; done++) progress.update('C=1', done, 36);
    progress.log('  C=1 rep 1/9 library: cyclesPerSec=5000');

    expect(out.text).toBe('Scenario 1 (1 of 9)…\n  C=1 rep 1/9 library: cyclesPerSec=5000\n');
  });
});
