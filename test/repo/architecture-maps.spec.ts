import { readFileSync } from 'node:fs';
import { ARCHITECTURE, drawMap, MAPS } from '../../tools/architecture-maps.js';

/** The Mermaid source of the map `name` as the page holds it. */
function mapInPage(page: string, name: string): string | undefined {
  const block = new RegExp(`<!-- map:${name} [^>]*-->\\s*\`\`\`mermaid\\n([\\s\\S]*?)\\n\`\`\``);
  return block.exec(page)?.[1]?.trim();
}

describe(`the maps of ${ARCHITECTURE}`, () => {
  const page = readFileSync(ARCHITECTURE, 'utf8');

  it.each(MAPS)(
    'draws $folder as the code imports it today (npm run docs:maps)',
    ({ name, folder }) => {
      expect(mapInPage(page, name)).toBe(drawMap(folder));
    },
  );

  it('draws every engine file and folder', () => {
    const engine = mapInPage(page, 'engine') ?? '';
    for (const part of ['request', 'wait', 'store-calls', 'hold', 'acquire', 'lock-engine.ts']) {
      expect(engine).toContain(`["${part}"]`);
    }
  });
});
