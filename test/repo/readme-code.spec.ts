import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { brokenLinks } from '../harness/doc-links.js';

const ROOT = resolve('.');

/** The README is the front page; the reference, recipes and operations live in docs/. */
const README_MAX_BYTES = 15_360;

/** The user docs whose TypeScript blocks are checked: the README and every page of docs/. */
function codeDocs(): string[] {
  const pages = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...pages];
}

/** Every markdown page a reader moves between by links. */
function linkedDocs(): string[] {
  const decisions = readdirSync(join(ROOT, 'docs/decisions'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/decisions/${name}`);
  return [...codeDocs(), ...decisions, 'CONTRIBUTING.md', 'sample-app/README.md'];
}

interface Block {
  readonly file: string;
  readonly line: number;
  readonly code: string;
}

/** A page's TypeScript blocks, each with the line it starts on. */
function tsBlocks(file: string): Block[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```ts') continue;
    const end = lines.indexOf('```', i + 1);
    blocks.push({ file, line: i + 1, code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

function allBlocks(): Block[] {
  return codeDocs().flatMap(tsBlocks);
}

/**
 * Type-checks every block as its own module, the way a user's app would compile it: the
 * package's names resolve to its sources, everything else to the repo's node_modules.
 */
function diagnostics(blocks: Block[]): string[] {
  const files = new Map(blocks.map((block, i) => [join(ROOT, `.readme/block-${i}.ts`), block]));
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2022.d.ts', 'lib.esnext.disposable.d.ts', 'lib.dom.d.ts'],
    strict: true,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
    baseUrl: ROOT,
    paths: {
      'nestjs-distributed-lock': ['lib/index.ts'],
      'nestjs-distributed-lock/*': ['lib/*/index.ts'],
    },
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.readFile = (name) => files.get(name)?.code ?? readFile(name);
  host.fileExists = (name) => files.has(name) || fileExists(name);
  // The blocks are ES modules, as in an ESM app.
  host.getSourceFile = (
    (getSourceFile) =>
    (name, version, ...rest) =>
      files.has(name)
        ? ts.createSourceFile(name, files.get(name)!.code, version, true)
        : getSourceFile(name, version, ...rest)
  )(host.getSourceFile.bind(host));
  const program = ts.createProgram([...files.keys()], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((diagnostic) => diagnostic.file && files.has(diagnostic.file.fileName))
    .map((diagnostic) => {
      const block = files.get(diagnostic.file!.fileName)!;
      const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
      return `${block.file}:${block.line + line + 1}: ${text}`;
    });
}

describe('the README and docs/', () => {
  it('have TypeScript blocks for the app, the recipes and the operations', () => {
    expect(allBlocks().length).toBeGreaterThanOrEqual(15);
  });

  it('keep the README to one short page', () => {
    expect(statSync(join(ROOT, 'README.md')).size).toBeLessThanOrEqual(README_MAX_BYTES);
  });

  it('link only to files and headings that exist', () => {
    const exists = (path: string): boolean => existsSync(join(ROOT, path));
    expect(linkedDocs().flatMap((file) => brokenLinks(ROOT, file, exists, exists))).toEqual([]);
  });

  it('type-check every TypeScript block against the package', () => {
    expect(diagnostics(allBlocks())).toEqual([]);
  }, 60_000);
});
