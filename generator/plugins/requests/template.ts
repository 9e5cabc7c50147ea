/*
 * generated/requests/index.ts and generated/console/requests/index.ts: each operation's request
 * rules (which validator checks which part, which parameters are integers, which business code a
 * bad value answers with), read by the HTTP layer before a handler runs. This is the requests
 * plugin's template, printed with the operations' rules filled in (and the import of the
 * validators, `import * as validators from './validators.js'`, which the rules name).
 */
import type { ErrorName } from '../errors/template.js';
import type { OperationId } from '../routes/template.js';
import type { RequestValidator } from './validators-template.js';

export interface ParameterRule {
  /** As the contract spells it (header names too). */
  readonly name: string;
  readonly in: 'query' | 'path' | 'header';
  /** A decimal integer literal in the URL or header is read as a number; anything else stays text and fails the type. */
  readonly integer: boolean;
  /** The business code a bad value answers with. */
  readonly error: ErrorName;
}

/** A message of spec/errors.yaml and its placeholders' values (a placeholder may hold a message: `condition`). */
export interface BodyIssueMessage {
  readonly key: string;
  readonly params: Readonly<Record<string, string | BodyIssueMessage>>;
}

/** How the problems under a body schema are reported where the contract says (`x-issue`). */
export interface BodyIssue {
  readonly rule: string;
  /** A validation message of spec/errors.yaml. */
  readonly key: string;
  readonly params: Readonly<Record<string, string | BodyIssueMessage>>;
}

export interface RequestRules {
  readonly parameters: readonly ParameterRule[];
  readonly path?: RequestValidator;
  readonly query?: RequestValidator;
  readonly headers?: RequestValidator;
  /** A JSON body checked against the contract (of a body naming a model, its envelope: createTask's `input` and createVideo's model fields are the model's validator's to check; a multipart form is checked by its handler once read into fields); `issues`: the contract's `x-issue` by the schema path it is on; `order`: an envelope's fields, the order its problems are listed in. */
  readonly body?: {
    readonly validate: RequestValidator;
    readonly required: boolean;
    readonly error: ErrorName;
    readonly issues?: Readonly<Record<string, BodyIssue>>;
    readonly order?: readonly string[];
  };
}

/** Each operation's request rules, read by the HTTP layer before its handler runs (filled in by the generator). */
export const requestRules: Readonly<Record<OperationId, RequestRules>> = {};

/** The query parameters with a contract default, by operation: always present after validation (filled in by the generator). */
export type DefaultedQuery = Partial<Record<OperationId, string>>;
