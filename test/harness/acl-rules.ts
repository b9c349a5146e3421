import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/** The page that documents the ACL rules; the tests read the rules from it, never a copy. */
const ACL_DOC = 'docs/acl.md';

/**
 * The rule under the heading `### Rule: <name>` of docs/acl.md: the words of the first ```text
 * block after it, as `ACL SETUSER` takes them.
 */
export function documentedRule(name: string): string[] {
  const lines = readFileSync(ACL_DOC, 'utf8').split('\n');
  const heading = lines.indexOf(`### Rule: ${name}`);
  if (heading < 0) throw new Error(`${ACL_DOC} has no "### Rule: ${name}" heading`);
  const start = lines.indexOf('```text', heading);
  const end = lines.indexOf('```', start + 1);
  if (start < 0 || end < 0) throw new Error(`"### Rule: ${name}" has no \`\`\`text block`);
  return lines
    .slice(start + 1, end)
    .join(' ')
    .split(/\s+/)
    .filter(Boolean);
}

/** Creates (or replaces) user `name` with password `password` and exactly `rule`. */
export async function createAclUser(
  admin: Redis,
  name: string,
  password: string,
  rule: readonly string[],
): Promise<void> {
  await admin.call('ACL', 'SETUSER', name, 'reset', 'on', `>${password}`, ...rule);
}

/** `redis://name:password@127.0.0.1:port`: how an app connects as an ACL user. */
export function userUrl(port: number, name: string, password: string): string {
  return `redis://${name}:${password}@127.0.0.1:${port}`;
}
