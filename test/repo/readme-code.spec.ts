import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve('.');

/** The README's TypeScript blocks, each with the line it starts on. */
function readmeBlocks(): { line: number; code: string }[] {
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n');
  const blocks: { line: number; code: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```ts') continue;
    const end = lines.indexOf('```', i + 1);
    blocks.push({ line: i + 1, code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

/**
 * Type-checks every block as its own module, the way a user's app would compile it: the
 * package's names resolve to its sources, everything else to the repo's node_modules.
 */
function diagnostics(blocks: { line: number; code: string }[]): string[] {
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
      return `README.md:${block.line + line + 1}: ${text}`;
    });
}

describe('the README', () => {
  it('has TypeScript blocks for the app, the recipes and the operations', () => {
    expect(readmeBlocks().length).toBeGreaterThanOrEqual(15);
  });

  it('type-checks every TypeScript block against the package', () => {
    expect(diagnostics(readmeBlocks())).toEqual([]);
  }, 60_000);
});
