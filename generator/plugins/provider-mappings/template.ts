/*
 * generated/provider-mappings.ts: how each upstream protocol names the catalogue's fields
 * (spec/providers/*.yaml, checked against every model by the loader), and the lookup the adapters use.
 */
export type ProviderScalar = string | number | boolean;

/** How one catalogue field is sent: renamed (a dot path nests it), converted, each value replaced, not at all, or not taken (unsupported). */
export interface ProviderField {
  to?: string;
  as?: 'string' | 'number' | 'integer' | 'boolean';
  values?: Record<string, ProviderScalar>;
  drop?: true;
  unsupported?: true;
}

/** One model under one protocol, shared part and the model's own merged. */
export interface ProviderMapping {
  protocol: string;
  fields: Record<string, ProviderField>;
  otherFields: 'pass' | 'declared';
  set: Record<string, unknown>;
  result?: string;
  serves: 'all' | 'subset';
  /** Per field, the values the model accepts that have no provider value (serves: subset). */
  unmapped: Record<string, ProviderScalar[]>;
  /** Per field the provider does not take, the model's default: a request with any other value is not sent there. */
  unsupported: Record<string, { default?: unknown }>;
}

/** The protocols adapters exist or are planned for; a deployments file may name these kinds. */
export const PROVIDER_PROTOCOLS = ['openai-videos'] as const;

interface ProtocolTable {
  fields: Record<string, ProviderField>;
  otherFields: 'pass' | 'declared';
  set: Record<string, unknown>;
  result?: string;
  /** Absent: `stored`. */
  references?: 'original';
  models: Record<
    string,
    {
      fields: Record<string, ProviderField>;
      set: Record<string, unknown>;
      result?: string;
      serves: 'all' | 'subset' | 'none';
    }
  >;
  unmapped: Record<string, Record<string, ProviderScalar[]>>;
  unsupported: Record<string, Record<string, { default?: unknown }>>;
  notServed: Record<string, NotServed>;
}

/** Why a protocol cannot run a model (derived by the generator, or `serves: none`): a required field it does not take, a mode it has no path for. */
export type NotServed = { field: string } | { mode: string } | { declared: true };

const TABLE: Record<string, ProtocolTable> = {};

/** Whether spec/providers/ has a mapping for the protocol at all. */
export function hasProviderMapping(protocol: string): boolean {
  return Object.hasOwn(TABLE, protocol);
}

/**
 * How a task's external references reach the protocol's upstreams: `stored` (signed links to the
 * copies the service fetched and measured) unless its spec/providers file says `original`.
 */
export function referenceLinksOf(protocol: string): 'stored' | 'original' {
  const table = Object.hasOwn(TABLE, protocol) ? TABLE[protocol] : undefined;
  return table?.references ?? 'stored';
}

/** Why the protocol cannot run the model; undefined when it can (or has no mapping file). */
export function notServedBy(protocol: string, modelId: string): NotServed | undefined {
  const table = Object.hasOwn(TABLE, protocol) ? TABLE[protocol] : undefined;
  return table && Object.hasOwn(table.notServed, modelId) ? table.notServed[modelId] : undefined;
}

/** The models the protocol cannot run, with why, in id order. */
export function modelsNotServedBy(protocol: string): { model: string; reason: NotServed }[] {
  const table = Object.hasOwn(TABLE, protocol) ? TABLE[protocol] : undefined;
  return Object.entries(table?.notServed ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([model, reason]) => ({ model, reason }));
}

/** The reason as a sentence: what `deployments check` prints and a refused route says. */
export function notServedText(protocol: string, reason: NotServed): string {
  const file = `spec/providers/${protocol}.yaml`;
  if ('field' in reason) return `it requires ${reason.field}, which ${file} does not take (unsupported)`;
  if ('mode' in reason) return `${file} has no submit path for mode ${reason.mode}`;
  return `${file} says serves: none`;
}

/** The mapping of one model under one protocol; undefined when the protocol has no mapping file or cannot run the model. */
export function providerMapping(protocol: string, modelId: string): ProviderMapping | undefined {
  const table = Object.hasOwn(TABLE, protocol) ? TABLE[protocol] : undefined;
  if (!table) return undefined;
  if (Object.hasOwn(table.notServed, modelId)) return undefined;
  const own = Object.hasOwn(table.models, modelId) ? table.models[modelId] : undefined;
  const result = own?.result ?? table.result;
  const unmapped = (Object.hasOwn(table.unmapped, modelId) ? table.unmapped[modelId] : undefined) ?? {};
  const unsupported = (Object.hasOwn(table.unsupported, modelId) ? table.unsupported[modelId] : undefined) ?? {};
  return {
    protocol,
    fields: { ...table.fields, ...own?.fields },
    otherFields: table.otherFields,
    set: { ...table.set, ...own?.set },
    ...(result ? { result } : {}),
    serves: Object.keys(unmapped).length > 0 || Object.keys(unsupported).length > 0 ? 'subset' : 'all',
    unmapped,
    unsupported,
  };
}
