import type { Model, Rule } from '../../load/types.js';
import { breaks, rulePath, satisfy } from './rules.js';
import { setAt, type Input, type Segment } from './sample.js';

export type Want = 'accept' | { reject: { path: string; rule: string } };
export interface Case {
  name: string;
  input: Input;
  want: Want;
}

/**
 * The vectors of one model as they are collected. Every vector states what it keeps fixed
 * (`pins`: field names, or `field[0]` for the first item of a list); the other fields are
 * adjusted so that the model's rules hold, and the vector tests only what its name says.
 */
export class Cases {
  readonly list: Case[] = [];
  private readonly names = new Set<string>();

  constructor(
    readonly model: Model,
    readonly base: Input,
  ) {}

  /** The base input with one value put in (undefined removes it). */
  with(segments: Segment[], value: unknown, input: Input = this.base): Input {
    return setAt(this.model, input, segments, value);
  }

  /** An accepted vector; dropped (false) when no adjustment of the free fields lets every rule hold. */
  accept(name: string, input: Input, pins: string[]): boolean {
    const fixed = satisfy(this.model, input, new Set(pins));
    if (fixed) this.add({ name, input: fixed, want: 'accept' });
    return fixed !== undefined;
  }

  /** A vector the schema rejects: rules are only checked once the schema passed, but keep them holding anyway. */
  reject(name: string, input: Input, pins: string[], path: string, rule: string): void {
    const fixed = satisfy(this.model, input, new Set(pins)) ?? input;
    this.add({ name, input: fixed, want: { reject: { path, rule } } });
  }

  /** A vector that breaks exactly one cross-field rule; dropped (false) when the others cannot all hold. */
  violate(name: string, input: Input, pins: string[], rule: Rule): boolean {
    const fixed = satisfy(this.model, input, new Set(pins), rule.id);
    const ok = fixed !== undefined && breaks(this.model, rule, fixed);
    if (ok) this.add({ name, input: fixed, want: { reject: { path: rulePath(rule), rule: rule.id } } });
    return ok;
  }

  private add(vector: Case): void {
    if (this.names.has(vector.name)) throw new Error(`${this.model.id}: two vectors are named "${vector.name}"`);
    this.names.add(vector.name);
    this.list.push(vector);
  }
}
