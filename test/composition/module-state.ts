import ts from 'typescript';

/**
 * What importing a module may do: declare things. This reads one source file's top-level
 * statements (TypeScript's parser, so strings and comments never match) and names each of:
 * - a statement that runs on import: any top-level statement other than an import, an export
 *   list, a declaration (function, class, interface, type, enum, const), or `export default` of a
 *   declaration;
 * - a module-level `let` or `var` (state that outlives any one service);
 * - a module-level `const` that the file then changes: `.set/.add/.push/.unshift/.splice/.delete/
 *   .clear/.pop/.shift(` on it, `delete` of a member, or an assignment to one of its members (a
 *   registry, a cache, a counter in an object).
 * Not detected: a change made through another name (an alias, a function the value is passed to)
 * or by a method of the value's own class (`pool.next()`).
 */
export function moduleStateProblems(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const problems: string[] = [];
  const at = (node: ts.Node, what: string) => {
    const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
    problems.push(`${fileName}:${line + 1}: ${what}`);
  };
  const constants: { name: string; node: ts.Node }[] = [];
  for (const statement of source.statements) {
    if (ts.isVariableStatement(statement)) {
      const flags = statement.declarationList.flags;
      if (!(flags & ts.NodeFlags.Const)) {
        at(statement, `module-level ${flags & ts.NodeFlags.Let ? 'let' : 'var'}`);
        continue;
      }
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name)) constants.push({ name: declaration.name.text, node: declaration });
      }
      continue;
    }
    if (isDeclaration(statement)) continue;
    at(statement, `runs on import: ${statement.getText(source).split('\n')[0].slice(0, 80)}`);
  }
  for (const { name, node } of constants) {
    if (isMutated(source, name)) at(node, `module-level ${name} is changed at run time (a registry)`);
  }
  return problems;
}

function isDeclaration(statement: ts.Statement): boolean {
  return (
    ts.isImportDeclaration(statement) ||
    ts.isImportEqualsDeclaration(statement) ||
    ts.isExportDeclaration(statement) ||
    ts.isFunctionDeclaration(statement) ||
    ts.isClassDeclaration(statement) ||
    ts.isInterfaceDeclaration(statement) ||
    ts.isTypeAliasDeclaration(statement) ||
    ts.isEnumDeclaration(statement) ||
    ts.isModuleDeclaration(statement) ||
    (ts.isExportAssignment(statement) && !ts.isCallExpression(statement.expression)) ||
    ts.isEmptyStatement(statement)
  );
}

const MUTATORS = new Set(['set', 'add', 'push', 'unshift', 'splice', 'delete', 'clear', 'pop', 'shift']);

/** `name.set(...)` and the like, or `name[...] = ` / `name.x = ` anywhere in the file. */
function isMutated(source: ts.SourceFile, name: string): boolean {
  let mutated = false;
  const visit = (node: ts.Node) => {
    if (mutated) return;
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      isName(node.expression.expression, name) &&
      MUTATORS.has(node.expression.name.text)
    )
      mutated = true;
    if (ts.isBinaryExpression(node) && isAssignment(node.operatorToken.kind)) {
      const target = node.left;
      if (
        (ts.isPropertyAccessExpression(target) || ts.isElementAccessExpression(target)) &&
        isName(target.expression, name)
      )
        mutated = true;
    }
    if (
      ts.isDeleteExpression(node) &&
      (ts.isPropertyAccessExpression(node.expression) || ts.isElementAccessExpression(node.expression)) &&
      isName(node.expression.expression, name)
    )
      mutated = true;
    ts.forEachChild(node, visit);
  };
  visit(source);
  return mutated;
}

function isName(node: ts.Node, name: string): boolean {
  return ts.isIdentifier(node) && node.text === name;
}

function isAssignment(kind: ts.SyntaxKind): boolean {
  return kind >= ts.SyntaxKind.FirstAssignment && kind <= ts.SyntaxKind.LastAssignment;
}
