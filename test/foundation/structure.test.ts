import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The house's structure (docs/development.md, 'Modules'), checked rather than read: modules are
 * built in src/wiring.ts strictly in the order of their dependencies, and sit on floors that import
 * only from the floors below them.
 */

/**
 * The floors of src/modules, lowest first. A module imports only from modules on lower floors; a
 * new module gets its place here.
 */
const FLOORS: string[][] = [
  ['audit', 'identity', 'system'],
  ['vault', 'accounts'],
  ['settings', 'signing'],
  ['catalogue', 'webhooks'],
  ['pricing', 'releases', 'media'],
  ['reports', 'cart'],
  ['licensing'],
  ['orders', 'distribution'],
  ['subscriptions', 'mail', 'legacy', 'tax'],
  ['checkout', 'test-data', 'invoices'],
  ['stripe'],
  ['imports'],
];

const root = resolve(import.meta.dirname, '../..');
const modulesDir = join(root, 'src/modules');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The module folder a path lies in, or null outside src/modules. */
function moduleOf(path: string): string | null {
  const rel = relative(modulesDir, path);
  return rel.startsWith('..') ? null : rel.split(sep)[0]!;
}

/** Every import of one module folder from another: `from -> to (file)`. */
function crossModuleImports(): { from: string; to: string; file: string }[] {
  const found: { from: string; to: string; file: string }[] = [];
  for (const file of filesUnder(modulesDir)) {
    const from = moduleOf(file)!;
    for (const { fileName } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const to = moduleOf(resolve(dirname(file), fileName));
      if (to && to !== from) found.push({ from, to, file: relative(root, file) });
    }
  }
  return found;
}

/**
 * Uses of buildModules' own variables before their declaration ends, closures included: a module
 * is handed only modules already made.
 */
function forwardReferences(source: string): string[] {
  const file = ts.createSourceFile('wiring.ts', source, ts.ScriptTarget.Latest, true);
  const program = ts.createProgram({
    rootNames: ['wiring.ts'],
    options: { noResolve: true, noLib: true },
    host: {
      ...ts.createCompilerHost({}),
      getSourceFile: (name) => (name === 'wiring.ts' ? file : undefined),
      fileExists: (name) => name === 'wiring.ts',
    },
  });
  const checker = program.getTypeChecker();
  const sourceFile = program.getSourceFile('wiring.ts')!;
  const build = sourceFile.statements.find(
    (s): s is ts.FunctionDeclaration => ts.isFunctionDeclaration(s) && s.name?.text === 'buildModules',
  );
  if (!build?.body) throw new Error('src/wiring.ts has no buildModules()');

  // Each variable of the function's body, with the end of the statement that declares it.
  const declaredEnd = new Map<ts.Symbol, number>();
  const names = new Set<ts.Node>();
  const declare = (name: ts.BindingName, end: number) => {
    if (ts.isIdentifier(name)) {
      declaredEnd.set(checker.getSymbolAtLocation(name)!, end);
      names.add(name);
    } else for (const e of name.elements) if (!ts.isOmittedExpression(e)) declare(e.name, end);
  };
  for (const s of build.body.statements) {
    if (ts.isVariableStatement(s)) for (const d of s.declarationList.declarations) declare(d.name, s.end);
  }

  const line = (node: ts.Node) => sourceFile.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isIdentifier(node) && !names.has(node)) {
      const symbol = ts.isShorthandPropertyAssignment(node.parent)
        ? checker.getShorthandAssignmentValueSymbol(node.parent)
        : checker.getSymbolAtLocation(node);
      const end = symbol && declaredEnd.get(symbol);
      if (end !== undefined && node.getStart() < end) found.push(`${node.text} (line ${line(node)})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(build.body);
  return found;
}

describe('the house', () => {
  const wiring = readFileSync(join(root, 'src/wiring.ts'), 'utf8');

  it('src/wiring.ts builds each module from modules already made: no forward reference, in closures neither', () => {
    expect(forwardReferences(wiring)).toEqual([]);
  });

  it('the check sees a forward reference, direct or in a closure', () => {
    const early = wiring.replace(
      'const settings = createSettings({',
      'const settings = createSettings({ early: () => releasesModule.storage, direct: stripe,',
    );
    expect(early).not.toBe(wiring);
    expect(forwardReferences(early)).toEqual([
      expect.stringMatching(/^releasesModule \(line \d+\)$/),
      expect.stringMatching(/^stripe \(line \d+\)$/),
    ]);
  });

  it('every module folder has its floor, once', () => {
    const listed = FLOORS.flat();
    expect(new Set(listed).size).toBe(listed.length);
    const folders = readdirSync(modulesDir, { withFileTypes: true }).filter((e) => e.isDirectory());
    expect(listed.toSorted()).toEqual(folders.map((e) => e.name).toSorted());
  });

  it('no module imports from its own floor or one above it', () => {
    const floorOf = new Map(FLOORS.flatMap((floor, i) => floor.map((m) => [m, i] as const)));
    const upward = crossModuleImports()
      .filter(({ from, to }) => floorOf.get(to)! >= floorOf.get(from)!)
      .map(
        ({ from, to, file }) =>
          `${file}: ${from} (floor ${floorOf.get(from)}) -> ${to} (floor ${floorOf.get(to)})`,
      );
    expect(upward).toEqual([]);
  });
});
