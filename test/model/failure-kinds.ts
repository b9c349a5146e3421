/**
 * The kind of invariant a failure broke, from its message: a long run shrinks the first failure
 * of each kind and only counts the rest, so that one frequent defect does not spend the hours.
 */
const KINDS: readonly [RegExp, string][] = [
  [/has no expiry/, 'key without expiry'],
  [/isHeld with/, 'isHeld without a lease'],
  [/entered its section/, 'code run without a lease'],
  [/both inside|holders inside a semaphore/, 'mutual exclusion'],
  [/: fence /, 'fence order'],
  [/refused .* with no other kind inside/, 'kind refused without a holder'],
  [/was free for/, 'waited while free'],
  [/in vain while/, 'passed over in line'],
  [/did not end within/, 'run hung'],
];

export function failureKind(message: string): string {
  const kinds = new Set<string>();
  for (const line of message.split('\n').slice(1)) {
    const known = KINDS.find(([pattern]) => pattern.test(line));
    if (known) kinds.add(known[1]);
    else {
      // An unexpected error: its text without ids, numbers and quoted names.
      const cause = line.replace(/.*with no fault to blame: /, '').replace(/"[^"]*"|[\d.]+/g, '_');
      kinds.add(`call failed: ${cause.trim().slice(0, 80)}`);
    }
  }
  return [...kinds].sort().join(' + ') || 'unknown';
}
