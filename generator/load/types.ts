import type { ProviderMapping } from './providers.js';
/** The in-memory catalogue the plugins read: spec/ validated, references resolved, inheritance expanded. */
export type JsonSchema = Record<string, unknown>;
export type Scalar = string | number | boolean;

export interface RawField {
  required?: boolean;
  default?: unknown;
  values?: Scalar[];
  min?: number;
  max?: number;
  auto?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  description?: string;
}

export interface Range {
  min?: number;
  max?: number;
}
export type Checked = 'acceptance' | 'generation-published';
export interface ReferenceLimits {
  formats?: string[];
  opaque?: boolean;
  sidePx?: Range;
  shortSidePx?: Range;
  maxBytes?: number;
  clipSeconds?: Range;
  totalSeconds?: Range;
  minFps?: number;
  checked: Checked;
}

export type Condition = { field: string; equals: Scalar } | { field: string; present: true };
export type Rule =
  | { kind: 'atLeastOne'; id: string; fields: string[] }
  | { kind: 'maxTotalItems'; id: string; fields: string[]; max: number }
  | { kind: 'requiredWhen'; id: string; field: string; when: Condition }
  | { kind: 'forbiddenWhen'; id: string; field: string; when: Condition }
  | { kind: 'valueWhen'; id: string; field: string; values: Scalar[]; when: Condition }
  | { kind: 'sumEquals'; id: string; field: string; property: string; equalsField: string };

export interface RawRate {
  rate: string;
  resolution?: string;
  with_video?: boolean;
  generate_audio?: boolean;
  enable_web_search?: boolean;
}
export interface ReferenceClips {
  field: string;
  maxTotalSeconds: number;
  perClipMinimumSeconds?: number;
  holdAssumesSeconds: number;
}
/**
 * A model that works on a supplied clip. `joined`: the output is the clip followed by a new segment
 * of duration_seconds (video-extend); `clip-length`: the output runs as long as the clip (video-edit).
 */
export interface SourceClip {
  field: string;
  output: 'joined' | 'clip-length';
  billSourceSeconds?: boolean;
  assumedSeconds: number;
}
export interface Assumption {
  what: string;
  reason: string;
}

/** What every model of one mode shares (spec/shared/modes.yaml). */
export interface ModeSpec {
  description: string;
  /** Fields every model of the mode accepts, required (`required`), and fields none accepts (`absent`). */
  fields?: { required?: string[]; absent?: string[] };
  /** What every model of the mode declares in pricing.sourceClip. */
  sourceClip?: Partial<Pick<SourceClip, 'output' | 'billSourceSeconds'>>;
  notes?: string[];
  decisions?: string[];
  assumptions?: Assumption[];
}

export interface RawModel {
  id: string;
  extends?: string;
  abstract?: boolean;
  title?: string;
  summary?: string;
  markers?: string;
  outputSizes?: string;
  fields?: Record<string, RawField | null>;
  references?: {
    image?: ReferenceLimits;
    video?: ReferenceLimits;
    audio?: ReferenceLimits;
    videoSecondsPlusDuration?: { max: number; checked: Checked };
  };
  /** A list, or (in a file that extends another) a map keyed by rule id; merged into a list on expansion. */
  rules?: Rule[];
  pricing?: {
    rates?: RawRate[];
    fixedOptions?: Record<string, Scalar>;
    referenceClips?: ReferenceClips;
    sourceClip?: SourceClip;
  };
  deprecated?: Deprecation;
  /** What the model publishes about its output file (spec/shared/output.yaml for the vocabulary and defaults). */
  output?: { frameRate?: number; codecs?: Record<string, string> };
  notes?: string[];
  decisions?: string[];
  assumptions?: Assumption[];
}

/** One container of spec/shared/output.yaml. */
export interface OutputContainer {
  name: string;
  label: string;
  mime: string;
  extension: string;
  /** ISO base media file format brands, the major brand first. */
  brands: string[];
}

/** spec/shared/output.yaml. */
export interface OutputVocabulary {
  containers: Record<string, Omit<OutputContainer, 'name'>>;
  defaultContainer: string;
  lastFrame: { label: string; mime: string; extension: string };
  codecs: Record<string, string>;
  frameRate: { value: number; reason: string };
  simulator: { codec: string; shapeFollowingReferences: string };
}

/** A model's output file: what it publishes, the defaults where it does not, and what the simulator stands in with. */
export interface ModelOutput {
  frameRate: number;
  /** false: the model publishes no rate, and `frameRate` is the assumed default. */
  frameRatePublished: boolean;
  /** The containers its `output_format` values name (the default container where it has no such field). */
  containers: OutputContainer[];
  defaultContainer: string;
  /** The image `return_last_frame: true` adds; absent on a model without that field. */
  lastFrame?: { label: string; mime: string; extension: string };
  /** The codec the model publishes per resolution (empty: none published). */
  codecs: Record<string, string>;
  hasAspectRatio: boolean;
  /** Values of aspect_ratio with no row in the size table (adaptive, auto): the frame follows the references. */
  ratiosFollowingReferences: string[];
  /** What the simulator writes: its codec, and the frame (per resolution) where the shape follows the references. */
  simulator: { codec: string; ratio: string; sizes: Record<string, string> };
}

/** One field of one model, with its final JSON Schema. */
export interface ModelField {
  name: string;
  required: boolean;
  schema: JsonSchema;
  /** Kind of reference the field carries (image, video, audio, document, link), if any. */
  reference?: string;
  /** The dictionary's string format (spec/shared/formats.yaml), if any. */
  format?: string;
  auto?: number;
}

export interface PricingOption {
  name: string;
  from?: string;
  nonEmpty?: string;
  decision?: string;
}
export interface Rate {
  when: Record<string, Scalar>;
  rate: string;
  rateHundredths: number;
}

export interface MarkerPattern {
  regex: string;
  kind?: string;
  ignoreCase?: boolean;
  number?: 'digits' | 'ordinal';
  kindWords?: Record<string, string>;
}
export interface MarkerStyle {
  name: string;
  description: string;
  patterns: MarkerPattern[];
  order?: string[];
  example: string;
}

export interface Model {
  id: string;
  vendor: string;
  family: string;
  mode: string;
  /** The mode's one-line description (spec/shared/modes.yaml). */
  modeDescription: string;
  /** Files this model was read from, its own first, then what it extends. */
  sources: string[];
  title: string;
  summary: string;
  markers: MarkerStyle;
  outputSizes?: { name: string; table: Record<string, Record<string, string>> };
  fields: ModelField[];
  /** Dictionary fields the model's mode never has (spec/shared/modes.yaml `absent`): rejected as unknown. */
  absentFields: ModelField[];
  inputSchema: JsonSchema;
  /** schemaPath prefix (ajv's `#/properties/...`) of each pattern, mapped to its validation message key. */
  patternMessages: Record<string, string>;
  references: NonNullable<RawModel['references']>;
  rules: Rule[];
  pricing: {
    options: PricingOption[];
    rates: Rate[];
    fixedOptions: Record<string, Scalar>;
    referenceClips?: ReferenceClips;
    sourceClip?: SourceClip;
  };
  /** Set while the model is being retired (spec/model.schema.json `deprecated`). */
  deprecated?: Deprecation;
  output: ModelOutput;
  /** The model's own notes, decisions and assumptions, then its mode's. */
  notes: string[];
  decisions: string[];
  assumptions: Assumption[];
}

export interface ErrorCatalogue {
  languages: string[];
  codes: { code: number; name: string; http: number; messages: Record<string, string> }[];
  validation: Record<string, Record<string, string>>;
  taskErrors: Record<string, Record<string, string>>;
  warnings: Record<string, Record<string, string>>;
}

export interface Catalogue {
  root: string;
  models: Model[];
  errors: ErrorCatalogue;
  openapiBase: JsonSchema;
  pricingOptions: PricingOption[];
  /** spec/shared/output.yaml: output containers, codec names, defaults and the simulator's stand-ins. */
  output: OutputVocabulary;
  /** spec/service/decisions.yaml: what mediaforge decided service-wide where the specification is silent. */
  serviceDecisions: ServiceDecision[];
  /** spec/service/states.yaml: the task states and every transition, the specification's and mediaforge's. */
  states: StateTable;
  /** spec/providers/*.yaml: how catalogue fields are sent to each upstream protocol. */
  providers: ProviderMapping[];
  /** Every spec file read, for the headers of generated files. */
  inputs: string[];
}

export interface ServiceDecision {
  id: string;
  title: string;
  decision: string;
  /** A reading of an ambiguous statement, not a choice where the specification is silent. */
  interpretation: boolean;
}

export interface StateTransition {
  origin: 'specification' | 'mediaforge';
  /** The states the row starts from; empty for a request that creates a task. */
  from: string[];
  trigger: string;
  condition: string;
  /** A state, or `unchanged`. */
  to: string;
  also: string;
}

export interface StateTable {
  states: string[];
  terminal: string[];
  transitions: StateTransition[];
}

/** A model being retired: refused from `sunset` (a UTC date, YYYY-MM-DD) on; `replacement` is the model to use instead. */
export interface Deprecation {
  sunset: string;
  replacement: string;
}
