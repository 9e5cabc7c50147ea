import type { ModelInfo } from '../../generated/catalogue.js';
import { assetIdOf } from '../assets/library.js';
import { referenceCopiesOf } from '../assets/reference-copies.js';
import { assetsById, referenceSites } from '../assets/references.js';
import { ownerOfTask } from '../assets/run-check.js';
import { signMediaPath } from '../blobs/blob-store.js';
import type { Context } from '../context.js';
import type { Deployment } from '../deployments/deployment.js';
import { sourceTaskId } from '../tasks/source-clip.js';
import type { StoredOutput, TaskRow } from '../tasks/task-record.js';
import { outputJsonOfKeyTask } from '../tasks/task-rows.js';

/** Links handed to an upstream outlive the task's deadline by this much (it may fetch late in the job). */
const LINK_GRACE_MS = 3600 * 1000;

function collectAssetIds(value: unknown, into: Set<string>): void {
  const id = assetIdOf(value);
  if (id !== undefined) into.add(id);
  else if (Array.isArray(value)) for (const entry of value) collectAssetIds(entry, into);
  else if (typeof value === 'object' && value !== null)
    for (const entry of Object.values(value)) collectAssetIds(entry, into);
}

function replaceAssets(value: unknown, links: Map<string, string>): unknown {
  const id = assetIdOf(value);
  if (id !== undefined) return links.get(id) ?? value;
  if (Array.isArray(value)) return value.map((entry) => replaceAssets(entry, links));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceAssets(v, links)]));
  return value;
}

/** The input with the value at each of `links`' field paths (`input.field[0].url`, as referenceSites names them) replaced. */
function replaceAtPaths(value: unknown, path: string, links: Map<string, string>): unknown {
  const link = links.get(path);
  if (link !== undefined) return link;
  if (Array.isArray(value)) return value.map((entry, i) => replaceAtPaths(entry, `${path}[${i}]`, links));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceAtPaths(v, `${path}.${k}`, links)]));
  return value;
}

/**
 * A task's input as an upstream can use it: the service's own references, which only it can
 * resolve, become signed links to its media under MEDIAFORGE_PUBLIC_URL, valid an hour past the
 * task's deadline: `service://a/<id>` assets of the task's library, a source clip named by the
 * id of a task (its stored output), and, for a deployment sent `stored` references, every external
 * URL the check lane fetched (the copy it measured, runtime/assets/reference-copies.ts: the
 * provider gets those bytes, not whatever the customer's host serves later). Everything else is
 * sent as the caller gave it.
 */
export async function portableInput(
  ctx: Context,
  task: TaskRow,
  model: ModelInfo,
  input: Record<string, unknown>,
  deployment: Pick<Deployment, 'referenceLinks'>,
): Promise<Record<string, unknown>> {
  const expiresAt = task.deadline_at + LINK_GRACE_MS;
  const link = (key: string) => `${ctx.config.publicUrl}${signMediaPath(ctx.secret, key, expiresAt)}`;
  let result = input;
  // Only a task with a link among its references has copies (no statement for the others).
  if (
    deployment.referenceLinks === 'stored' &&
    referenceSites(model, input).some((s) => /^https?:\/\//i.test(s.value))
  ) {
    const copies = await referenceCopiesOf(ctx, task.id);
    if (copies.size > 0)
      result = replaceAtPaths(result, 'input', new Map([...copies].map(([path, key]) => [path, link(key)]))) as Record<
        string,
        unknown
      >;
  }
  const ids = new Set<string>();
  collectAssetIds(input, ids);
  if (ids.size > 0) {
    const assets = await assetsById(ctx, await ownerOfTask(ctx, task), [...ids]);
    result = replaceAssets(input, new Map([...assets].map(([id, row]) => [id, link(row.blob_key)]))) as Record<
      string,
      unknown
    >;
  }
  const source = sourceTaskId(model, input);
  if (source !== undefined) {
    const outputJson = await outputJsonOfKeyTask(ctx.db.kysely, task.api_key_id, source);
    const outputs = outputJson ? (JSON.parse(outputJson) as StoredOutput[]) : [];
    const clip = outputs.find((o) => o.mime.startsWith('video/')) ?? outputs[0];
    if (clip) result = { ...result, [model.pricing.sourceClip!.field]: link(clip.key) };
  }
  return result;
}
