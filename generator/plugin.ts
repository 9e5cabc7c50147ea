import type { Catalogue } from './load/types.js';

/** One file a plugin emits, relative to generated/. The writer adds the header. */
export interface GeneratedFile {
  path: string;
  contents: string;
  /** Spec files this output was made from, named in its header. */
  inputs: string[];
}

export interface PluginContext {
  catalogue: Catalogue;
  /** Files already emitted by the plugins this one depends on, by path. */
  emitted: Map<string, GeneratedFile>;
}

/** An output kind: a folder under generator/plugins with its emitter and its test. */
export interface Plugin {
  name: string;
  dependsOn?: string[];
  emit(context: PluginContext): GeneratedFile[] | Promise<GeneratedFile[]>;
}

/** The inputs every file that reads all models was made from. */
export function allModelInputs(catalogue: Catalogue): string[] {
  return [`spec/models/**/*.yaml (${catalogue.models.length} models)`, 'spec/shared/*.yaml'];
}
