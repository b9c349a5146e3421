/**
 * The ACL user the services connect as, made from docs/acl.md's "every feature" rule (read from
 * the page, so the rule the checker runs is the one users copy), and the commands of it the
 * checker may revoke during a run: each one the library sends, in its scripts or on its own.
 */
import { randomBytes } from 'node:crypto';
import { documentedRule } from '../harness/acl-rules.js';

export interface AclUser {
  readonly name: string;
  readonly password: string;
}

export function newAclUser(): AclUser {
  return { name: 'model-services', password: randomBytes(12).toString('hex') };
}

/**
 * The rule for one server, or for a Cluster: docs/acl.md says a Cluster uses sharded pub/sub and
 * asks for the slot map.
 */
export function servicesRule(cluster: boolean): string[] {
  const rule = documentedRule('every feature');
  if (!cluster) return rule;
  const sharded: Record<string, string> = {
    '+publish': '+spublish',
    '+subscribe': '+ssubscribe',
    '+unsubscribe': '+sunsubscribe',
  };
  return [...rule.map((word) => sharded[word] ?? word), '+cluster|slots', '+cluster|info'];
}

/** `redis-server` arguments that create the user at every start (a restart keeps it). */
export function userArgs(user: AclUser, rule: readonly string[]): string[] {
  return ['--user', user.name, 'on', `>${user.password}`, ...rule];
}

/** The commands a revoke may take away: those the locks use (not `info`, ioredis's own). */
export function revocable(cluster: boolean): string[] {
  return servicesRule(cluster)
    .filter((word) => /^\+[a-z]+$/.test(word) && word !== '+info')
    .map((word) => word.slice(1));
}
