import * as acquire from './acquire.scripts.js';
import * as fencedWrite from './fenced-write.scripts.js';
import * as holderSet from './holder-set.scripts.js';
import * as inspection from './inspection.scripts.js';
import * as release from './release.scripts.js';
import type { LuaScript } from './lua-script.js';

/** Every script the modules export, a publishing script's two forms included. */
function scripts(): [string, LuaScript][] {
  const found: [string, LuaScript][] = [];
  const modules = { acquire, fencedWrite, holderSet, inspection, release };
  for (const [module, exports] of Object.entries(modules)) {
    for (const [name, value] of Object.entries(exports)) {
      if (typeof value !== 'object' || value === null) continue;
      if ('body' in value) found.push([`${module}.${name}`, value as LuaScript]);
      else if ('PUBLISH' in value) {
        for (const [form, script] of Object.entries(value as Record<string, LuaScript>)) {
          found.push([`${module}.${name}.${form}`, script]);
        }
      }
    }
  }
  return found;
}

describe('the Lua scripts', () => {
  it('are all found', () => {
    expect(scripts().length).toBeGreaterThanOrEqual(12);
  });

  // Redis 7.0 names only the script line of a command the ACL user may not run: the refusal's
  // advice reads the command from that line, so each line may name one.
  it.each(scripts())('%s runs at most one Redis command per line', (_, script) => {
    const crowded = script.body
      .split('\n')
      .filter((line) => (line.match(/redis\.p?call\(/g) ?? []).length > 1);
    expect(crowded).toEqual([]);
  });
});
