/**
 * Reading the code references of the README and docs/: which names a TypeScript file exports
 * (found with the TypeScript parser, so types and interfaces count too), and the references a
 * Markdown page makes, written `[`src/rl/votes.ts`](../src/rl/votes.ts) `majorityVote``: a
 * link whose text is the file's path, followed by the names it exports; or
 * `[`majorityVote`](../src/rl/votes.ts)`: a link whose text is the name. `Class.member` names a
 * member of an exported class.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface CodeReference {
  /** The page it was found in, relative to the repository. */
  page: string;
  line: number;
  /** The path as the link's text shows it. */
  shown: string;
  /** The link target resolved against the page, relative to the repository. */
  target: string;
  symbols: string[];
}

/** Exported names of a TypeScript file, and the members of each exported class. */
export function exportsOf(file: string): { names: Set<string>; members: Map<string, Set<string>> } {
  const source = ts.createSourceFile(file, readFileSync(resolve(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, false);
  const names = new Set<string>();
  const members = new Map<string, Set<string>>();
  const exported = (node: ts.Node) => ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      for (const el of statement.exportClause.elements) names.add(el.name.text);
      continue;
    }
    if (!exported(statement)) continue;
    if (ts.isVariableStatement(statement)) {
      for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name)) names.add(d.name.text);
    } else if (
      (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement) || ts.isEnumDeclaration(statement)) &&
      statement.name
    ) {
      names.add(statement.name.text);
      if (ts.isClassDeclaration(statement)) {
        const own = new Set<string>();
        for (const m of statement.members) if (m.name && (ts.isIdentifier(m.name) || ts.isPrivateIdentifier(m.name))) own.add(m.name.text);
        members.set(statement.name.text, own);
      }
    }
  }
  return { names, members };
}

/** Why `symbol` is not an export of `file` (null when it is). */
export function missingExport(file: string, symbol: string): string | null {
  const { names, members } = exportsOf(file);
  const [name, member] = symbol.split('.');
  if (!names.has(name)) return `${file} exports no ${name}`;
  if (member !== undefined && !members.get(name)?.has(member)) return `${file}'s ${name} has no member ${member}`;
  return null;
}

const SYMBOL = '`[A-Za-z_$][\\w$]*(?:\\.[A-Za-z_$][\\w$]*)?`';
/** [`path`](href) then backticked names, separated by spaces or commas; or [`Name`](href). */
const REFERENCE = new RegExp(`\\[\`([^\`\\]]+)\`\\]\\(([^)#\\s]+)\\)((?:[ \\t]*,?[ \\t]*${SYMBOL})*)`, 'g');
const IDENTIFIER = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)?$/;

/** Every code reference of a Markdown page (a path relative to the repository). */
export function codeReferences(page: string): CodeReference[] {
  const text = readFileSync(resolve(ROOT, page), 'utf8');
  const out: CodeReference[] = [];
  for (const m of text.matchAll(REFERENCE)) {
    const [, shown, href, tail] = m;
    if (/^[a-z]+:/.test(href)) continue;
    const target = relative(ROOT, resolve(ROOT, dirname(page), href));
    const symbols = [...tail.matchAll(/`([^`]+)`/g)].map((s) => s[1]);
    // [`GenerationBatcher`](../src/runtime/batcher.ts): the link's text is the name itself.
    const isName = IDENTIFIER.test(shown) && basename(target) !== shown;
    out.push({ page, line: text.slice(0, m.index).split('\n').length, shown: isName ? target : shown, target, symbols: isName ? [shown, ...symbols] : symbols });
  }
  return out;
}

/** What is wrong with one reference: a path shown unlike its target, a missing file or export. */
export function referenceProblems(r: CodeReference): string[] {
  const at = `${r.page}:${r.line}`;
  const problems: string[] = [];
  if (r.shown !== r.target && !r.target.endsWith('/' + r.shown)) problems.push(`${at}: the link shows ${r.shown} but points at ${r.target}`);
  if (!existsSync(resolve(ROOT, r.target))) return [...problems, `${at}: ${r.target} does not exist`];
  if (!/\.(ts|mts)$/.test(r.target)) return problems;
  for (const s of r.symbols) {
    const why = missingExport(r.target, s);
    if (why) problems.push(`${at}: ${why}`);
  }
  return problems;
}

/** Anchors GitHub makes for a page's headings. */
export function headingAnchors(page: string): Set<string> {
  const text = readFileSync(resolve(ROOT, page), 'utf8').replace(/```[\s\S]*?```/g, '');
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = m[1]
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Relative links of a page to Markdown pages (with their anchors), for checking. */
export function pageLinks(page: string): { line: number; target: string; anchor: string | null }[] {
  const text = readFileSync(resolve(ROOT, page), 'utf8');
  const out: { line: number; target: string; anchor: string | null }[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const href = m[1];
    if (/^[a-z]+:/.test(href)) continue;
    const [path, anchor = null] = href.split('#');
    const target = path === '' ? page : relative(ROOT, resolve(ROOT, dirname(page), path));
    out.push({ line: text.slice(0, m.index).split('\n').length, target, anchor });
  }
  return out;
}
