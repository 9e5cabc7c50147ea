/**
 * JSON Schema (the merged OpenAPI document's, 3.1) to Python type expressions and TypedDict classes.
 * Only what the document uses: $ref, const, enum, type (with null), oneOf/anyOf, allOf of one ref,
 * arrays, objects with properties (a nested TypedDict) or without (dict[str, ...]).
 */
export type Schema = Record<string, unknown>;

/** A Python string literal (JSON's escapes are Python's for the characters the spec holds). */
export const pyString = (value: string): string => JSON.stringify(value);

/** `Input_vendor_a_family_a_2_0_text_to_video` -> `InputVendorAFamilyA20TextToVideo`; `TaskRecord` stays. */
export const pyClassName = (name: string): string =>
  name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join('');

function literal(value: unknown): string {
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string') return pyString(value);
  if (typeof value === 'number') return String(value);
  throw new Error(`python-client: no Python literal for ${JSON.stringify(value)}`);
}

/** What a docstring says of a field's limits (the values are in the Literal). */
export function limits(schema: Schema): string[] {
  const out: string[] = [];
  const n = (k: string) => (typeof schema[k] === 'number' ? (schema[k] as number) : undefined);
  const range = (min: number | undefined, max: number | undefined, unit: string) => {
    if (min !== undefined && max !== undefined) out.push(`${min} to ${max}${unit}.`);
    else if (min !== undefined) out.push(`At least ${min}${unit}.`);
    else if (max !== undefined) out.push(`At most ${max}${unit}.`);
  };
  range(n('minLength'), n('maxLength'), ' characters');
  range(n('minimum'), n('maximum'), '');
  range(n('minItems'), n('maxItems'), ' items');
  if ('default' in schema) out.push(`Default ${JSON.stringify(schema.default)}.`);
  return out;
}

export class PythonTypes {
  private readonly classes = new Map<string, string>();
  private readonly order: string[] = [];

  constructor(
    private readonly schemas: Record<string, Schema>,
    private readonly nameOf: (schemaName: string) => string,
  ) {}

  /** A component schema by name: a TypedDict for an object, else a type alias. */
  named(name: string): string {
    const className = this.nameOf(name);
    if (this.classes.has(className)) return className;
    const schema = this.schemas[name];
    if (!schema) throw new Error(`python-client: no schema ${name}`);
    if (schema.type === 'object' && schema.properties) this.typedDict(className, schema, schema.description as string);
    else {
      this.classes.set(className, ''); // reserved before the walk: a recursive alias names itself
      const text = `${className} = ${this.expr(schema, className)}\n${docstring(schema.description as string | undefined, '')}`;
      this.classes.set(className, text);
      this.order.push(className);
    }
    return className;
  }

  typedDict(className: string, schema: Schema, description: string | undefined): string {
    this.classes.set(className, '');
    const required = new Set((schema.required as string[] | undefined) ?? []);
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const body: string[] = [];
    for (const [field, fieldSchema] of Object.entries(properties)) {
      const type = this.expr(fieldSchema, `${className}${pyClassName(field)}`);
      body.push(`    ${field}: ${required.has(field) ? `Required[${type}]` : type}`);
      const notes = [fieldSchema.description as string | undefined, ...limits(fieldSchema)].filter(Boolean);
      if (required.has(field)) notes.push('Required.');
      if (notes.length) body.push(docstring(notes.join(' '), '    ').trimEnd());
    }
    const title = [schema.title, description].filter(Boolean).join(': ');
    const text = [
      `class ${className}(TypedDict, total=False):`,
      docstring(title || className, '    ').trimEnd(),
      '',
      ...(body.length ? body : ['    pass']),
      '',
    ].join('\n');
    this.classes.set(className, text);
    this.order.push(className);
    return className;
  }

  expr(schema: Schema, hint: string): string {
    if (typeof schema.$ref === 'string') return this.named(schema.$ref.split('/').pop()!);
    if ('const' in schema) return `Literal[${literal(schema.const)}]`;
    if (Array.isArray(schema.enum)) {
      const values = schema.enum as unknown[];
      const nonNull = values.filter((v) => v !== null);
      const text = `Literal[${nonNull.map(literal).join(', ')}]`;
      return values.includes(null) ? `${text} | None` : text;
    }
    const union = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
    if (union) return unionOf(union.map((s, i) => this.expr(s, `${hint}${i}`)));
    const allOf = schema.allOf as Schema[] | undefined;
    if (allOf?.length === 1) return this.expr(allOf[0], hint);
    if (Array.isArray(schema.type))
      return unionOf((schema.type as string[]).map((t) => this.expr({ ...schema, type: t }, hint)));
    switch (schema.type) {
      case 'string':
        return 'str';
      case 'integer':
        return 'int';
      case 'number':
        return 'float';
      case 'boolean':
        return 'bool';
      case 'null':
        return 'None';
      case 'array':
        return `list[${schema.items ? this.expr(schema.items as Schema, `${hint}Item`) : 'Any'}]`;
      case 'object': {
        if (schema.properties) return this.typedDict(hint, schema, schema.description as string | undefined);
        const extra = schema.additionalProperties;
        return `dict[str, ${extra && typeof extra === 'object' ? this.expr(extra as Schema, `${hint}Value`) : 'Any'}]`;
      }
    }
    return 'Any';
  }

  /** Every class and alias, each after the ones it names (the order of first completion). */
  render(): string {
    return `${this.order.map((name) => this.classes.get(name)).join('\n\n')}\n\n`;
  }
}

function unionOf(parts: string[]): string {
  const unique = [...new Set(parts)];
  const hasNone = unique.includes('None');
  const rest = unique.filter((p) => p !== 'None');
  const text = rest.length === 1 ? rest[0] : `Union[${rest.join(', ')}]`;
  return hasNone ? `${text} | None` : text;
}

function docstring(text: string | undefined, indent: string): string {
  if (!text) return '';
  const clean = text.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  return `${indent}"""${clean}"""\n`;
}
