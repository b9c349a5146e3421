/*
 * The links of the markdown pages: read outside code blocks, with the anchors GitHub gives
 * headings, so that the repo's pages and the packed package's can be checked the same way.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Where absolute links into the repository point: a page (`blob`) or an image (`raw`). Files
 * the package does not ship are linked this way, as npm's page and an installed copy both
 * reach them only so.
 */
export const REPO_BLOB =
  'https://github.com/nestjs-distributed-lock/nestjs-distributed-lock/blob/main/';
export const REPO_RAW =
  'https://raw.githubusercontent.com/nestjs-distributed-lock/nestjs-distributed-lock/main/';

/** A page's lines outside code blocks, numbered from 1. */
export function proseLines(text: string): { line: number; text: string }[] {
  let inCode = false;
  return text.split('\n').flatMap((line, i) => {
    if (line.trimStart().startsWith('```')) inCode = !inCode;
    return inCode || line.trimStart().startsWith('```') ? [] : [{ line: i + 1, text: line }];
  });
}

/** The anchors GitHub gives a page's headings (lower case, punctuation dropped, `-` for spaces). */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const { text: line } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    found.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return found;
}

/** Every link target of a page (`[text](target)` and `![alt](target)`), with its line. */
export function linksOf(text: string): { line: number; target: string }[] {
  return proseLines(text).flatMap(({ line, text: prose }) =>
    [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map(([, target]) => ({ line, target })),
  );
}

/** The repository path an absolute link into the repository names, or undefined. */
export function repoPathOf(target: string): string | undefined {
  for (const base of [REPO_BLOB, REPO_RAW]) {
    if (target.startsWith(base)) return target.slice(base.length).split('#')[0];
  }
  return undefined;
}

/**
 * The broken links of `file` (a path relative to `root`), as `<file>:<line>: <target>`: a
 * relative link whose file is not in `has`, or whose heading is not in the linked page; an
 * absolute link into the repository whose file is not in the repository at `repoRoot`. Other
 * absolute links (`https:`, `mailto:`) are not followed.
 */
export function brokenLinks(
  root: string,
  file: string,
  has: (path: string) => boolean,
  repoHas: (path: string) => boolean,
): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const broken: string[] = [];
  for (const { line, target } of linksOf(text)) {
    if (/^[a-z]+:/i.test(target)) {
      const inRepo = repoPathOf(target);
      if (inRepo !== undefined && !repoHas(inRepo)) broken.push(`${file}:${line}: ${target}`);
      continue;
    }
    const [path, anchor] = target.split('#');
    const linked = path === '' ? file : join(file, '..', path);
    const exists = has(linked);
    const anchored =
      anchor === undefined ||
      (linked.endsWith('.md') &&
        exists &&
        anchors(readFileSync(join(root, linked), 'utf8')).has(anchor));
    if (!exists || !anchored) broken.push(`${file}:${line}: ${target}`);
  }
  return broken;
}
