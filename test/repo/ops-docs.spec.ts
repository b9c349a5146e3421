import { readFileSync } from 'node:fs';
import { documentedRule } from '../harness/acl-rules.js';

/** The paragraph of `page` that starts with `start`, up to the next blank line. */
function paragraph(page: string, start: string): string {
  const text = readFileSync(page, 'utf8');
  const from = text.indexOf(start);
  if (from < 0) throw new Error(`${page} has no paragraph starting "${start}"`);
  const end = text.indexOf('\n\n', from);
  return text.slice(from, end < 0 ? undefined : end);
}

describe('the operator pages agree with the code and with each other', () => {
  it("operations.md's metrics list names every event of events$", () => {
    const events = readFileSync('lib/engine/lock.events.ts', 'utf8');
    const types = [...events.matchAll(/readonly type: '([\w-]+)'/g)].map(([, type]) => type);
    expect(types).toEqual(expect.arrayContaining(['store-refused', 'eviction-unverified']));
    const listed = paragraph('docs/operations.md', '- `LockService.events$` is an RxJS stream');
    expect(types.filter((type) => !listed.includes(`\`${type}\``))).toEqual([]);
  });

  it("inspection.md names exactly the grants of acl.md's inspection rule", () => {
    const said = paragraph('docs/inspection.md', 'ACL:');
    const grants = [...said.matchAll(/\+[\w|]+/g)].map(([grant]) => grant);
    expect(new Set(grants)).toEqual(new Set(documentedRule('inspection')));
    expect(said).toContain('(acl.md#rule-inspection)');
  });
});
