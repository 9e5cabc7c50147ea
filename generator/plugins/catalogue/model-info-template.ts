/*
 * generated/model-info.ts: every model's public description (GET /models, the docs, the playground
 * form), apart from generated/catalogue.ts so that what needs only the descriptions (the service's
 * settings, the console commands) loads none of the validators.
 */

/** The public description of a model: GET /models, the docs, the playground form. */
export interface ModelInfo {
  id: string;
  mode: 'text-to-video' | 'image-to-video' | 'reference-to-video' | 'video-extend' | 'video-edit';
  modeDescription: string;
  vendor: string;
  family: string;
  title: string;
  summary: string;
  docsPath: string;
  markerStyle: string;
  markerDescription: string;
  markerExample: string;
  /** [field, reference kind] for every field that carries a reference. */
  referenceFields: [string, string][];
  referenceLimits: Record<string, Record<string, unknown>>;
  rules: Record<string, unknown>[];
  pricing: {
    unit: 'credits_per_second';
    options: string[];
    rates: { options: Record<string, string | boolean>; rate: string; rateHundredths: number }[];
    /** Pricing options whose value is fixed on this model (not read from the input). */
    fixedOptions: Record<string, string | boolean>;
    referenceClips: {
      field: string;
      maxTotalSeconds: number;
      perClipMinimumSeconds?: number;
      holdAssumesSeconds: number;
    } | null;
    /** The supplied clip the model works on (video-extend, video-edit): its field, how the output follows, its billing. */
    sourceClip: {
      field: string;
      output: 'joined' | 'clip-length';
      billSourceSeconds?: boolean;
      assumedSeconds: number;
    } | null;
    minimumFor5sCredits: number;
    /** The same when no optional reference list is given (rates needing one, as with_video, left out): what the playground says "from". */
    minimumFor5sWithoutReferencesCredits: number;
  };
  outputSizes: Record<string, Record<string, string>> | null;
  /** The output file (spec/shared/output.yaml and the model's `output` block). */
  output: {
    /** Frames per second: published by the model, else the assumed default (see assumptions). */
    frameRate: number;
    frameRatePublished: boolean;
    /** The container per value of output_format; a model without that field has the default container only. */
    containers: Record<string, { label: string; mime: string; extension: string; brands: string[] }>;
    defaultContainer: string;
    /** The image `return_last_frame: true` adds as a second output asset, at the clip's size; null without that field. */
    lastFrame: { label: string; mime: string; extension: string } | null;
    /** The video codec the model publishes per resolution; empty where it publishes none. */
    codecs: Record<string, string>;
    /** The built-in simulator: the codec it writes, and its frame per resolution where the model's shape follows the references. */
    simulator: { codec: string; sizesFollowingReferences: Record<string, string> };
  };
  /** null for a current model; the first refused day (UTC) and the model to use instead while it is being retired. */
  deprecated: { sunset: string; replacement: string } | null;
  inputSchema: {
    type: string;
    required?: string[];
    properties: Record<string, Record<string, unknown>>;
    [key: string]: unknown;
  };
  notes: string[];
  decisions: string[];
  assumptions: { what: string; reason: string }[];
}

/** Every model's public description, in id order (filled in by the generator). */
export const MODEL_INFO: readonly ModelInfo[] = [];
