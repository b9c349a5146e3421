/**
 * The kind of invariant a failure broke, from its message: a long run shrinks the first failure
 * of each kind and only counts the rest, so that one frequent defect does not spend the hours;
 * the mutant suite scores by kind, and may set aside the kinds of a known defect.
 */
const KINDS: readonly [RegExp, string | ((match: RegExpExecArray) => string)][] = [
  // A root cause the checker names is the kind, whatever it broke besides.
  [/a local hand-off of a removed lease/, 'hand-off of a removed lease'],
  [/handed off by a holder that does not renew/, 'hand-off not renewed'],
  [/has no expiry .*was revoked\)/, 'key without expiry under a revoke'],
  [/has no expiry/, 'key without expiry'],
  [
    /revoked (-\S+(?: -\S+)*): .*a refusal read as a holder/,
    (m) => `refusal read as a holder (${m[1]})`,
  ],
  [
    /revoked (-\S+(?: -\S+)*): .*failed while .*\(the wrong grant\)/,
    (m) => `refusal names the wrong grant (${m[1]})`,
  ],
  [
    /revoked (-\S+(?: -\S+)*): .*failed while/,
    (m) => `refusal not a LockStoreRefusedError (${m[1]})`,
  ],
  [/the signal aborted after another holder's grant/, 'signal after another grant'],
  [/the local deadline outlives the lease/, 'deadline past the lease'],
  [/isHeld with/, 'isHeld without a lease'],
  [/entered its section/, 'code run without a lease'],
  [/the lock does not cover the keys asked for/, 'lock of other keys'],
  [/both inside|holders inside a semaphore/, 'mutual exclusion'],
  [/passed on a lease Redis no longer held/, 'hand-off of a removed lease'],
  [/reported within \d+ ms of the forced release/, 'forced release not reported in time'],
  [/a removed lease must be reported by its lease's own deadline/, 'removed lease not reported'],
  [/a value the library must not write/, 'foreign value changed'],
  [/with nothing to blame/, 'lease lost with nothing to blame'],
  [/a hand-off passes more than half/, 'hand-off lease out of bounds'],
  [/within a loop turn of the stall/, 'stall loss reported late'],
  [/held past its maxHold/, 'held past maxHold'],
  [/before its holder's next store call/, 'loss silent until release'],
  [/: fence /, 'fence order'],
  [/refused .* with no other kind inside/, 'kind refused without a holder'],
  [/was free for/, 'waited while free'],
  [/in vain while/, 'passed over in line'],
  [/did not end within/, 'run hung'],
  [/outside move failed/, 'outside move failed'],
  [/unhandled rejection/, 'unhandled rejection'],
];

/** The kind of one violation line. */
export function lineKind(line: string): string {
  for (const [pattern, kind] of KINDS) {
    const match = pattern.exec(line);
    if (match) return typeof kind === 'string' ? kind : kind(match);
  }
  // An unexpected error: its text without ids, numbers and quoted names.
  const cause = line.replace(/.*with no fault to blame: /, '').replace(/"[^"]*"|[\d.]+/g, '_');
  return `call failed: ${cause.trim().slice(0, 80)}`;
}

export function failureKind(message: string): string {
  const kinds = new Set(message.split('\n').slice(1).map(lineKind));
  if (kinds.size === 0 && message.trim()) kinds.add(lineKind(message.split('\n')[0]!));
  return [...kinds].sort().join(' + ') || 'unknown';
}
