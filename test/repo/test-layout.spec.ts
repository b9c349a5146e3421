import { readdir } from 'node:fs/promises';

/** Folders under test/ that hold shared helpers rather than specs. */
const SUPPORT_NAMES = /^(support|helpers?|utils?|harness|testing)$/;

/** Every folder under test/, relative to it; test/compat holds whole apps, not our helpers. */
async function testFolders(): Promise<string[]> {
  const top = (await readdir('test', { withFileTypes: true })).filter(
    (entry) => entry.isDirectory() && entry.name !== 'compat',
  );
  const nested = await Promise.all(
    top.map((entry) => readdir(`test/${entry.name}`, { recursive: true, withFileTypes: true })),
  );
  return [...top, ...nested.flat()]
    .filter((entry) => entry.isDirectory())
    .map((entry) => `${entry.parentPath}/${entry.name}`.slice('test/'.length));
}

describe('the test tree', () => {
  // One toolkit: a helper written twice drifts, and a newcomer should not have to choose.
  it('has one support folder, test/harness', async () => {
    const support = (await testFolders()).filter((path) =>
      SUPPORT_NAMES.test(path.split('/').pop()!),
    );
    expect(support).toEqual(['harness']);
  });
});
