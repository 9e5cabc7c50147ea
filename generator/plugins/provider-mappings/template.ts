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
}

const TABLE: Record<string, ProtocolTable> = {};

/** Whether spec/providers/ has a mapping for the protocol at all. */
export function hasProviderMapping(protocol: string): boolean {
  return Object.hasOwn(TABLE, protocol);
}

/** The mapping of one model under one protocol; undefined when the protocol has no mapping file or cannot run the model (serves: none). */
export function providerMapping(protocol: string, modelId: string): ProviderMapping | undefined {
  const table = Object.hasOwn(TABLE, protocol) ? TABLE[protocol] : undefined;
  if (!table) return undefined;
  const own = Object.hasOwn(table.models, modelId) ? table.models[modelId] : undefined;
  if (own?.serves === 'none') return undefined;
  const result = own?.result ?? table.result;
  const unmapped = (Object.hasOwn(table.unmapped, modelId) ? table.unmapped[modelId] : undefined) ?? {};
  const unsupported = (Object.hasOwn(table.unsupported, modelId) ? table.unsupported[modelId] : undefined) ?? {};
  return {
    protocol,
    fields: { ...table.fields, ...own?.fields },
    otherFields: table.otherFields,
    set: { ...table.set, ...own?.set },
    ...(result ? { result } : {}),
    serves: own?.serves ?? (Object.keys(unsupported).length > 0 ? 'subset' : 'all'),
    unmapped,
    unsupported,
  };
}
