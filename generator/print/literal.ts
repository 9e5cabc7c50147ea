import { ts } from 'ts-morph';

const f = ts.factory;

/** A reference to a name in scope of the generated module (an imported function, say), not a value. */
export class Identifier {
  constructor(readonly name: string) {}
}

const IDENTIFIER_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function stringLiteral(text: string): ts.StringLiteral {
  const node = f.createStringLiteral(text, true);
  // Texts in 12 languages stay readable in generated/ (the printer would write \u escapes).
  ts.setEmitFlags(node, ts.EmitFlags.NoAsciiEscaping);
  return node;
}

function numberLiteral(value: number): ts.Expression {
  if (!Number.isFinite(value)) throw new Error(`cannot print the number ${value}`);
  const abs = f.createNumericLiteral(Math.abs(value));
  return value < 0 || Object.is(value, -0) ? f.createPrefixUnaryExpression(ts.SyntaxKind.MinusToken, abs) : abs;
}

const isComposite = (value: unknown) =>
  typeof value === 'object' && value !== null && !(value instanceof Identifier) && !(value instanceof RegExp);

/** An object or array prints on one line only when it holds scalars and is short. */
const oneLine = (items: unknown[], value: unknown) =>
  !items.some(isComposite) && (JSON.stringify(value)?.length ?? 0) <= 100;

/**
 * The expression node of a data value: JSON values, a Map (`new Map([...])`), a RegExp
 * (`new RegExp(source, flags)`) or an Identifier. An object or array prints one entry per line unless
 * it holds only scalars and is short; keys keep their insertion order.
 */
export function literal(value: unknown): ts.Expression {
  if (value instanceof Identifier) return f.createIdentifier(value.name);
  if (value === null) return f.createNull();
  if (typeof value === 'string') return stringLiteral(value);
  if (typeof value === 'number') return numberLiteral(value);
  if (typeof value === 'boolean') return value ? f.createTrue() : f.createFalse();
  if (value instanceof RegExp)
    return f.createNewExpression(f.createIdentifier('RegExp'), undefined, [
      stringLiteral(value.source),
      stringLiteral(value.flags),
    ]);
  if (value instanceof Map)
    return f.createNewExpression(f.createIdentifier('Map'), undefined, [literal([...value.entries()])]);
  if (Array.isArray(value)) return f.createArrayLiteralExpression(value.map(literal), !oneLine(value, value));
  if (typeof value === 'object') {
    const properties = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .map(([key, item]) =>
        f.createPropertyAssignment(
          IDENTIFIER_NAME.test(key) ? f.createIdentifier(key) : stringLiteral(key),
          literal(item),
        ),
      );
    return f.createObjectLiteralExpression(properties, !oneLine(Object.values(value), value));
  }
  throw new Error(`cannot print a value of type ${typeof value}`);
}

/** A union of string literal types: `'a' | 'b'`. */
export function stringUnion(values: readonly string[]): ts.TypeNode {
  if (values.length === 0) return f.createKeywordTypeNode(ts.SyntaxKind.NeverKeyword);
  return f.createUnionTypeNode(values.map((value) => f.createLiteralTypeNode(stringLiteral(value))));
}
