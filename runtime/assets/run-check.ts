import { catalogue, type ModelInfo } from '../../generated/catalogue.js';
import { formatMessage } from '../../generated/errors.js';
import { outboundPolicy } from '../config.js';
import type { Context } from '../context.js';
import type { Probed } from '../files/probe.js';
import { probeRemote } from '../files/probe-remote.js';
import type { TaskRow } from '../tasks/task-record.js';
import { assetIdOf, type AssetRow, type LibraryOwner } from './library.js';
import { limitIssues, limitsFor, type KnownReference } from './limits.js';
import { keepReferenceCopies, storeReferenceCopy } from './reference-copies.js';
import { assetsById, knownFromAsset, referenceSites, type ReferenceSite } from './references.js';

/** Time allowed for fetching one external reference while a task starts. */
const FETCH_TIMEOUT_MS = 20_000;

export interface RunProblem {
  code: 'reference_invalid' | 'reference_unreachable';
  /** English detail (field path and the broken limit); shown in errorMessage for reference_invalid. */
  detail: string;
}

/** The library a task's references were resolved in: its account and its key's workspace. */
export async function ownerOfTask(ctx: Context, task: TaskRow): Promise<LibraryOwner> {
  const key = await ctx.db.kysely
    .selectFrom('api_keys')
    .select('workspace')
    .where('id', '=', task.api_key_id)
    .executeTakeFirst();
  return { accountId: task.account_id, library: key?.workspace ?? 'personal' };
}

/** The field whose clips a model bills by length (the catalogue's referenceClips), if any. */
function billedField(info: ModelInfo): string | undefined {
  return info.pricing.referenceClips?.field;
}

/** A link to the customer's own host (not a library asset, not a task id). */
function isLink(site: ReferenceSite): boolean {
  return assetIdOf(site.value) === undefined && /^https?:\/\//i.test(site.value);
}

/** Whether the model judges a reference at this site by what it is: a kind with limits, or a clip it bills by length. */
function isJudged(info: ModelInfo, site: ReferenceSite): boolean {
  const limits = info.referenceLimits;
  return (
    limitsFor(limits, site.kind) !== undefined ||
    (site.kind === 'video' && limits.videoSecondsPlusDuration !== undefined) ||
    site.field === billedField(info)
  );
}

/**
 * Whether the check fetches an external link. Every link, when a deployment of the model is sent
 * the service's copies (`storing`: issue 37 point 3, the provider gets the bytes the check
 * measured); otherwise only a link the model judges (measured here, before the submit: never
 * after the provider's job). Only links are fetched; other values (a source task's id, for
 * instance) are resolved by their own feature.
 */
function isFetched(info: ModelInfo, site: ReferenceSite, storing: boolean): boolean {
  return isLink(site) && (storing || isJudged(info, site));
}

/**
 * Whether the check of this task fetches external files (network, up to the fetch timeout per
 * file): the worker then runs it in its own lane instead of the task lane. Reads the row and the
 * model's routes only.
 */
export function fetchesReferences(ctx: Context, task: TaskRow): boolean {
  const model = catalogue.get(task.model);
  if (!model || !task.input_json) return false;
  const input = JSON.parse(task.input_json) as Record<string, unknown>;
  const storing = ctx.deployments.storesReferences(model.info);
  return referenceSites(model.info, input).some((site) => isFetched(model.info, site, storing));
}

/** What the check found: a problem that fails the task, or the billed clips' lengths (in the field's order) to keep with it. */
export type CheckOutcome = { problem: RunProblem } | { problem?: undefined; clipSeconds?: number[] };

/** `checkTaskReferences` when only its verdict matters. */
export async function checkReferencesBeforeRun(ctx: Context, task: TaskRow): Promise<RunProblem | undefined> {
  return (await checkTaskReferences(ctx, task)).problem;
}

/**
 * The check a task gets before its deployment starts, for every deployment (the simulator
 * included). What it checks:
 * - every `service://a/<id>` still names a live asset of the task's library (a deleted one:
 *   reference_unreachable);
 * - when a deployment of the model is sent the service's copies (Deployments.storesReferences),
 *   every external URL is fetched whole once, stored as the task's copy and measured from the
 *   stored bytes (./reference-copies.ts); otherwise external URLs of a kind the model has limits
 *   for, and the clips it bills by length, are fetched once through the SSRF-guarded agent (no redirects, capped at the kind's maxBytes or the
 *   upload cap) and probed from the stream like an upload (runtime/files/probe-remote.ts: only the
 *   head and a movie header are kept); a refused or failing fetch is reference_unreachable
 *   (reference_invalid for a billed clip, whose length cannot then be measured);
 * - then every limit of the model: those marked `checked: generation-published` (where the
 *   specification publishes generation-time enforcement: clip lengths, totals, fps, reference
 *   seconds plus duration) and, for the external files, those marked `acceptance` too, over all
 *   references together: any problem is reference_invalid;
 * - every billed clip has a measured length (a video whose length can be read, or a library
 *   asset's stored length): those lengths are what settlement bills.
 * A problem fails the task (the hold is released) before anything runs.
 */
export async function checkTaskReferences(ctx: Context, task: TaskRow): Promise<CheckOutcome> {
  const model = catalogue.get(task.model);
  if (!model || !task.input_json) return {};
  const input = JSON.parse(task.input_json) as Record<string, unknown>;
  const limits = model.info.referenceLimits;
  const sites = referenceSites(model.info, input);
  if (sites.length === 0) return {};
  const ids = sites.map((s) => assetIdOf(s.value)).filter((id): id is string => id !== undefined);
  // The task's library is read only when it names assets (links alone need no owner).
  const assets =
    ids.length === 0 ? new Map<string, AssetRow>() : await assetsById(ctx, await ownerOfTask(ctx, task), ids);
  const billed = billedField(model.info);
  const storing = ctx.deployments.storesReferences(model.info);
  const known: KnownReference[] = [];
  const copies: { path: string; blobKey: string; bytes: number }[] = [];
  let complete = true;
  const fetches: Promise<RunProblem | undefined>[] = [];
  for (const [index, site] of sites.entries()) {
    const id = assetIdOf(site.value);
    if (id !== undefined) {
      const row = assets.get(id);
      if (!row)
        return { problem: { code: 'reference_unreachable', detail: `${site.path}: the asset no longer exists` } };
      known.push(knownFromAsset(site, row));
      continue;
    }
    if (!isFetched(model.info, site, storing)) {
      complete = false;
      continue;
    }
    const fetched: Fetched = {
      site,
      limit: limitsFor(limits, site.kind),
      billedClip: site.field === billed,
      judged: isJudged(model.info, site),
    };
    fetches.push(
      storing
        ? fetchAndStore(ctx, task.id, index, fetched, known, copies).then((verdict) => {
            // A file the model does not judge, of no type the probe knows: stored and sent, but totals cannot count it.
            if (verdict === 'unknown type') complete = false;
            return verdict === 'unknown type' ? undefined : verdict;
          })
        : fetchAndProbe(ctx, fetched, known),
    );
  }
  const fetched = await Promise.all(fetches);
  // Kept whatever the verdict: the task's purge deletes them (a failed task's copies included).
  await keepReferenceCopies(ctx, task.id, copies);
  const failed = fetched.find((p) => p !== undefined);
  if (failed) return { problem: failed };
  known.sort((a, b) => sites.findIndex((s) => s.path === a.path) - sites.findIndex((s) => s.path === b.path));
  const issues = limitIssues(limits, known, 'generation', complete, input.duration_seconds);
  if (issues.length > 0)
    return {
      problem: {
        code: 'reference_invalid',
        detail: issues.map((issue) => formatMessage(issue.message, 'en')).join(' '),
      },
    };
  return billedClipSeconds(billed, input, known);
}

/** One external link the check fetches: its site, the limits of its kind, whether the model bills it by length. */
interface Fetched {
  site: ReferenceSite;
  limit: ReturnType<typeof limitsFor>;
  billedClip: boolean;
  /** The model judges it by what it is (isJudged): a file of no known type is then a problem. */
  judged: boolean;
}

/** The fetch settings of one link: the outbound guard, capped at the kind's size limit or the upload cap. */
function fetchOptions(ctx: Context, { limit }: Fetched) {
  return {
    policy: outboundPolicy(ctx.config),
    timeoutMs: FETCH_TIMEOUT_MS,
    maxBytes: Math.min(ctx.config.uploadMaxBytes, limit?.maxBytes ?? ctx.config.uploadMaxBytes),
  };
}

/** A fetch that failed, as the task's problem. */
function fetchProblem(ctx: Context, f: Fetched, reason: string, detail: string): RunProblem {
  if (reason === 'too_large' && f.limit?.maxBytes !== undefined) {
    const cap = fetchOptions(ctx, f).maxBytes;
    return {
      code: 'reference_invalid',
      detail: formatMessage(
        { key: 'asset_bytes', params: { field: f.site.path, bytes: `more than ${cap}`, max: f.limit.maxBytes } },
        'en',
      ),
    };
  }
  // A billed clip that cannot be read cannot be measured: the request is what is wrong, as a provider would say.
  if (f.billedClip) return { code: 'reference_invalid', detail: `${f.site.path} could not be fetched (${detail}).` };
  return { code: 'reference_unreachable', detail: `${f.site.path}: ${reason}` };
}

/** What a fetched file is, added to `known`; a file of no type the probe knows is a problem where its kind has limits. */
function measured(
  f: Fetched,
  probed: Probed | undefined,
  bytes: number,
  known: KnownReference[],
): RunProblem | 'unknown type' | undefined {
  const { site, limit } = f;
  if (!probed) {
    if (!f.judged) return 'unknown type';
    return {
      code: 'reference_invalid',
      detail: formatMessage(
        {
          key: 'asset_format',
          params: { field: site.path, format: 'unknown', allowed: limit?.formats?.join(', ') ?? `${site.kind} files` },
        },
        'en',
      ),
    };
  }
  const { width, height, hasAlpha, durationSeconds, fps } = probed;
  known.push({
    path: site.path,
    field: site.field,
    kind: site.kind,
    fileKind: probed.kind,
    format: probed.format,
    bytes,
    width,
    height,
    hasAlpha,
    durationSeconds,
    fps,
  });
  return undefined;
}

/** One external reference fetched and probed from the stream (nothing kept): what it is goes into `known`, or a problem comes back. */
async function fetchAndProbe(ctx: Context, f: Fetched, known: KnownReference[]): Promise<RunProblem | undefined> {
  const fetched = await probeRemote(f.site.value, {
    ...fetchOptions(ctx, f),
    // The size is read to the end only where a size limit is judged on it and the answer did not declare it.
    countAll: f.limit?.maxBytes !== undefined,
  });
  if (!fetched.ok) return fetchProblem(ctx, f, fetched.reason, fetched.detail);
  // Only judged links are fetched without storing: a type the probe does not know is never `unknown type` here.
  const verdict = measured(f, fetched.probed, fetched.bytes, known);
  return verdict === 'unknown type' ? undefined : verdict;
}

/**
 * One external reference fetched whole and stored as the task's copy (./reference-copies.ts),
 * then measured from the stored bytes: the copy is what the provider will be sent, so the limits
 * and the bill judge exactly that.
 */
async function fetchAndStore(
  ctx: Context,
  taskId: string,
  index: number,
  f: Fetched,
  known: KnownReference[],
  copies: { path: string; blobKey: string; bytes: number }[],
): Promise<RunProblem | 'unknown type' | undefined> {
  const stored = await storeReferenceCopy(ctx, taskId, index, f.site.value, fetchOptions(ctx, f));
  if (!stored.ok) return fetchProblem(ctx, f, stored.reason, stored.detail);
  copies.push({ path: f.site.path, blobKey: stored.blobKey, bytes: stored.bytes });
  return measured(f, stored.probed, stored.bytes, known);
}

/**
 * The lengths of the billed clips, one per entry of the field, from what the check knows of each
 * (a probe of the fetched clip, or a library asset's stored length). A clip without a readable
 * length fails the task now, before anything is submitted: it could not be billed afterwards.
 */
function billedClipSeconds(
  field: string | undefined,
  input: Record<string, unknown>,
  known: KnownReference[],
): CheckOutcome {
  const clips = field ? input[field] : undefined;
  if (!field || !Array.isArray(clips) || clips.length === 0) return {};
  const seconds: number[] = [];
  for (const index of clips.keys()) {
    const path = `input.${field}[${index}]`;
    const ref = known.find((k) => k.path === path);
    const length = ref?.durationSeconds;
    if (ref?.fileKind !== 'video' || typeof length !== 'number' || !(length > 0)) {
      const what = ref && ref.fileKind !== 'video' ? 'is not a video file' : 'is a video whose length cannot be read';
      return { problem: { code: 'reference_invalid', detail: `${path} ${what}.` } };
    }
    seconds.push(length);
  }
  return { clipSeconds: seconds };
}
