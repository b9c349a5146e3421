import { hasControlCharacter, isBlank, MAX_KEY_BYTES } from '../../engine/request/lock-request.js';
import { LockKeyError } from '../../errors/lock.errors.js';

/** Builds one key from a method's arguments. */
export type KeyBuilder = (args: readonly unknown[], method: string) => string;

interface Placeholder {
  readonly source: string;
  readonly index: number;
  readonly path: readonly string[];
}

type Part = string | Placeholder;

const placeholderPattern = /^(\d+)((?:\.[A-Za-z0-9_$]+)*)$/;

/**
 * Compiles a key template once, at decoration time. `{0}` is argument 0 and `{1.user.id}` a
 * property path into argument 1; `{{` and `}}` are literal braces (for Redis Cluster hash
 * tags, e.g. `'{{stock}}:{0}'` gives `{stock}:42`). A malformed template throws here.
 */
export function compileKeyTemplate(template: string, where: string): KeyBuilder {
  if (template.length === 0) throw templateError(template, where, 'it is empty; name the resource');
  const parts = parseTemplate(template, where);
  checkFixedText(parts, template, where);
  return (args, method) => {
    let key = '';
    for (const part of parts)
      key += typeof part === 'string' ? part : valueOf(part, args, template, method);
    return key;
  };
}

function parseTemplate(template: string, where: string): Part[] {
  const parts: Part[] = [];
  let literal = '';
  for (let i = 0; i < template.length; i++) {
    const char = template[i];
    if ((char === '{' || char === '}') && template[i + 1] === char) {
      literal += char;
      i++;
    } else if (char === '}') {
      throw templateError(
        template,
        where,
        `a lone "}" at position ${i}; write "}}" for a literal brace`,
      );
    } else if (char === '{') {
      const close = template.indexOf('}', i);
      if (close < 0) throw templateError(template, where, `"{" at position ${i} is never closed`);
      if (literal) parts.push(literal);
      literal = '';
      parts.push(parsePlaceholder(template.slice(i + 1, close), template, where));
      i = close;
    } else {
      literal += char;
    }
  }
  if (literal) parts.push(literal);
  return parts;
}

/**
 * What no argument can mend fails here, when the class is defined, rather than on every call:
 * a template of white space only, a control character or fixed text beyond the longest key.
 */
function checkFixedText(parts: readonly Part[], template: string, where: string): void {
  const literals = parts.filter((part): part is string => typeof part === 'string');
  const fixed = literals.join('');
  if (literals.length === parts.length && isBlank(fixed))
    throw templateError(template, where, 'it is only white space; name the resource');
  if (hasControlCharacter(fixed))
    throw templateError(template, where, 'it contains a control character; use printable ones');
  if (Buffer.byteLength(fixed) > MAX_KEY_BYTES)
    throw templateError(template, where, `its fixed text is longer than ${MAX_KEY_BYTES} bytes`);
}

function parsePlaceholder(source: string, template: string, where: string): Placeholder {
  const match = placeholderPattern.exec(source);
  if (!match) {
    throw templateError(
      template,
      where,
      `"{${source}}" is not a placeholder. Use {N} for argument N or {N.path.to.value} for a property of it, and "{{" "}}" for literal braces`,
    );
  }
  return { source: `{${source}}`, index: Number(match[1]), path: match[2].split('.').slice(1) };
}

function valueOf(
  placeholder: Placeholder,
  args: readonly unknown[],
  template: string,
  method: string,
): string {
  let value: unknown = args[placeholder.index];
  for (const segment of placeholder.path) {
    value =
      value !== null && typeof value === 'object'
        ? (value as Record<string, unknown>)[segment]
        : undefined;
  }
  const text = keyPart(value);
  if (text !== undefined) return text;
  throw new LockKeyError(
    `${method}: lock key template "${template}" needs ${placeholder.source}, but it is ${shown(value)}. ` +
      'Pass a non-empty string or a finite number there, or change the template.',
    undefined,
    `The lock key needs a value (${placeholder.source}), but it is ${shown(value)}.`,
  );
}

function keyPart(value: unknown): string | undefined {
  if (typeof value === 'string') return isBlank(value) ? undefined : value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  return undefined;
}

function shown(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (value === '') return 'an empty string';
  if (typeof value === 'string') return 'only white space';
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return 'an array';
  return `${typeof value === 'object' ? 'an' : 'a'} ${typeof value}, not a string or number`;
}

function templateError(template: string, where: string, problem: string): LockKeyError {
  return new LockKeyError(`${where}: bad lock key template "${template}": ${problem}.`);
}
