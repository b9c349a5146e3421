import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the engine names waiting and hand-off. */
const FOLDERS = ['lib/engine/wait', 'lib/engine/acquire', 'lib/engine/hold', 'lib/policy'];

/** Words of identifiers there that are plain English or plain programming, not coined terms. */
const PLAIN = new Set(
  `a abort acquire acquired add after all alone early has kept ms send and answered arm at auto aware back base before
  begin behind by call calls can cause clear constructor context controller count create current
  default delay delete discard done drain drained emit emptied end ended engine entry error expires
  extend extension fail failed failure find finish first flight for forget frame free from full get
  give go hooks id if in index inside interval is it joined keep key keys label last left lifetime
  lock lose min nested next note notify now number of on options out outcome override owner parent
  pending place reason reject release released releases releasing remaining request requests
  resolve restart result results retry return run running schedule seen sent set settle settled
  signal since size sleep soon started state step stop storage store string subscribe super take
  the tick time timeout timer timing to token took touch transfer try ttl unreachable unsubscribe
  unsubscribes until up values wait waited waiting while whose within may heard fn ran readonly
  child children down e grow library moved new peek push put remove replace scope top second room
  locally over slow unanswered asked conflict innermost overlap partial same why far found gone
  measure memory rate refused spell tell fits overdue headroom`.split(/\s+/),
);

/** Identifiers declared in a file: classes, types, functions, members, constants. */
function identifiers(source: string): string[] {
  const declared =
    /(?:class|interface|type|function|const|let|readonly|private|protected|public|get|set|static)\s+([A-Za-z_]\w*)|^\s+(?:async\s+|private\s+|protected\s+|static\s+)*([a-z_]\w*)\s*[(<]|^\s+(?:readonly\s+)?([a-z_]\w*)\??:|^\s+([a-z_]\w*)\s*=[^=]/gm;
  return [...source.matchAll(declared)].map(
    (match) => match[1] ?? match[2] ?? match[3] ?? match[4],
  );
}

function words(identifier: string): string[] {
  return (identifier.match(/[A-Z]?[a-z]+|[A-Z]+(?![a-z])/g) ?? []).map((word) =>
    word.toLowerCase(),
  );
}

/** A word and the forms it may have come from: holders, holding → hold; leases → lease. */
function forms(word: string): string[] {
  const bases = [word];
  for (const suffix of ['s', 'es', 'd', 'ed', 'ing', 'er', 'ers', 'able']) {
    if (word.endsWith(suffix)) bases.push(word.slice(0, -suffix.length));
  }
  return bases.flatMap((base) => [base, `${base}e`]);
}

/** The glossary: the doc's last section, in two parts (the field's words, and the coined ones). */
function glossary(): string {
  const doc = readFileSync('docs/ARCHITECTURE.md', 'utf8');
  return doc.slice(doc.indexOf('## Glossary'));
}

/** One part of `text`, from its heading to the next heading. */
function part(text: string, heading: string): string {
  const start = text.indexOf(`### ${heading}`);
  if (start < 0) throw new Error(`no "### ${heading}" in the glossary`);
  const body = text.slice(start + heading.length + 4);
  const end = body.search(/^#{1,3} /m);
  return end < 0 ? body : body.slice(0, end);
}

/** Every term a part puts in bold: its entries and the sub-terms inside them. */
function boldTerms(text: string): string[] {
  return [...text.matchAll(/\*\*([^*]+)\*\*/g)].map((m) => m[1]);
}

/** Words defined anywhere in the glossary, in bold or in code, in either part. */
function glossaryTerms(): Set<string> {
  const spans = [...glossary().matchAll(/\*\*([^*]+)\*\*|`([^`]+)`/g)].map((m) => m[1] ?? m[2]);
  return new Set(spans.flatMap((span) => span.split(/[^A-Za-z]+/).flatMap(words)).flatMap(forms));
}

/** Issue 29's target: a newcomer learns at most this many words the project made up. */
const MOST_COINED = 20;

describe("docs/ARCHITECTURE.md's glossary", () => {
  it('defines every coined word of the identifiers about waiting and hand-off', () => {
    const terms = glossaryTerms();
    const sources = FOLDERS.flatMap((folder) =>
      readdirSync(folder)
        .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'))
        .map((file) => readFileSync(join(folder, file), 'utf8')),
    );
    const used = new Set(sources.flatMap(identifiers).flatMap(words));
    const undefinedWords = [...used].filter(
      (word) => !forms(word).some((form) => PLAIN.has(form) || terms.has(form)),
    );
    // A new word here: define it in the glossary, or list it above if it is plain English.
    expect(undefinedWords.sort()).toEqual([]);
  });

  it('finds the coined words it is meant to check', () => {
    const used = new Set(
      FOLDERS.flatMap((folder) =>
        readdirSync(folder)
          .filter((file) => file.endsWith('.ts'))
          .flatMap((file) => identifiers(readFileSync(join(folder, file), 'utf8')).flatMap(words)),
      ),
    );
    for (const word of ['successor', 'unqueued', 'others', 'handoffs', 'outside', 'turn']) {
      expect(used).toContain(word);
    }
  });

  it(`coins at most ${MOST_COINED} terms, counting every bold term of its coined part`, () => {
    const coined = boldTerms(part(glossary(), 'Words this project coins'));
    expect(coined.length).toBeGreaterThan(0);
    expect(coined.length).toBeLessThanOrEqual(MOST_COINED);
    // The field's words are defined in a part of their own, so both parts must be there.
    expect(boldTerms(part(glossary(), 'Words of the field')).length).toBeGreaterThan(0);
  });

  it('counts the bold terms of one part, sub-terms included, up to the next heading', () => {
    const sample = [
      '### Words of the field',
      '- **Lease**: a key with a **ttl**.',
      '### Words this project coins',
      '- **Hand-off cap** (`x`): see **turn grace**.',
      '- **Unqueued**.',
      '## After',
      '- **Other**',
    ].join('\n');
    const coined = boldTerms(part(sample, 'Words this project coins'));
    expect(coined).toEqual(['Hand-off cap', 'turn grace', 'Unqueued']);
    expect(boldTerms(part(sample, 'Words of the field'))).toEqual(['Lease', 'ttl']);
  });
});
