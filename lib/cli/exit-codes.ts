/**
 * The admin CLI's exit codes, for scripts that call it (documented in docs/inspection.md).
 */
export const EXIT = {
  /** The command did what it was asked. */
  ok: 0,
  /** Nothing there: `inspect` or `release` of a free key, `list` that matched no lock. */
  notFound: 1,
  /** The command line is wrong: no command, an unknown command or option, a missing key, `release` without `--force`. */
  usage: 2,
  /** Redis could not be reached, or did not answer within `--timeout` (connecting included). */
  unreachable: 3,
  /** Redis answered with an error (e.g. NOPERM: the ACL user may not run the command). */
  failed: 4,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A command line the CLI cannot run: its message is printed with the usage, exit code 2. */
export class UsageError extends Error {}
