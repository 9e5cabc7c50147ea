import { catalogue, type ModelInfo } from '../../generated/catalogue.js';
import { formatMessage } from '../../generated/errors.js';
import { outboundPolicy } from '../config.js';
import type { Context } from '../context.js';
import { probeBytes } from '../files/probe.js';
import { fetchCapped } from '../files/remote-fetch.js';
import type { TaskRow } from '../tasks/task-record.js';
import { assetIdOf, type LibraryOwner } from './library.js';
import { limitIssues, limitsFor, type KnownReference } from './limits.js';
import { assetsById, clipSeconds, knownFromAsset, referenceSites, type ReferenceSite } from './references.js';

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

/**
 * An external link of a kind the model has limits for: fetched by the check. Only links are
 * fetched; other values (a source task's id, for instance) are resolved by their own feature.
 */
function isFetched(limits: ModelInfo['referenceLimits'], site: ReferenceSite): boolean {
  if (assetIdOf(site.value) !== undefined) return false;
  const needed =
    limitsFor(limits, site.kind) !== undefined ||
    (site.kind === 'video' && limits.videoSecondsPlusDuration !== undefined);
  return needed && /^https?:\/\//i.test(site.value);
}

/**
 * Whether the check of this task fetches external files (network, up to the fetch timeout per
 * file): the worker then runs it in its own lane instead of the task lane. Reads the row only.
 */
export function fetchesReferences(task: TaskRow): boolean {
  const model = catalogue.get(task.model);
  if (!model || !task.input_json) return false;
  const input = JSON.parse(task.input_json) as Record<string, unknown>;
  return referenceSites(model.info, input).some((site) => isFetched(model.info.referenceLimits, site));
}

/**
 * The check a task gets before its deployment starts, for every deployment (the simulator
 * included). What it checks:
 * - every `service://a/<id>` still names a live asset of the task's library (a deleted one:
 *   reference_unreachable);
 * - external URLs of a kind the model has limits for are fetched once through the SSRF-guarded
 *   agent (no redirects, capped at the kind's maxBytes or the upload cap) and probed like an
 *   upload; a refused or failing fetch is reference_unreachable;
 * - then every limit of the model: those marked `checked: generation-published` (where the
 *   specification publishes generation-time enforcement: clip lengths, totals, fps, reference
 *   seconds plus duration) and, for the external files, those marked `acceptance` too, over all
 *   references together: any problem is reference_invalid.
 * A problem fails the task (the hold is released) before anything runs.
 */
export async function checkReferencesBeforeRun(ctx: Context, task: TaskRow): Promise<RunProblem | undefined> {
  const model = catalogue.get(task.model);
  if (!model || !task.input_json) return undefined;
  const input = JSON.parse(task.input_json) as Record<string, unknown>;
  const limits = model.info.referenceLimits;
  const sites = referenceSites(model.info, input);
  if (sites.length === 0) return undefined;
  const owner = await ownerOfTask(ctx, task);
  const assets = await assetsById(
    ctx,
    owner,
    sites.map((s) => assetIdOf(s.value)).filter((id): id is string => id !== undefined),
  );
  const known: KnownReference[] = [];
  let complete = true;
  const fetches: Promise<RunProblem | undefined>[] = [];
  for (const site of sites) {
    const id = assetIdOf(site.value);
    if (id !== undefined) {
      const row = assets.get(id);
      if (!row) return { code: 'reference_unreachable', detail: `${site.path}: the asset no longer exists` };
      known.push(knownFromAsset(site, row));
      continue;
    }
    const limit = limitsFor(limits, site.kind);
    if (!isFetched(limits, site)) {
      complete = false;
      continue;
    }
    fetches.push(
      (async () => {
        const cap = Math.min(ctx.config.uploadMaxBytes, limit?.maxBytes ?? ctx.config.uploadMaxBytes);
        const fetched = await fetchCapped(site.value, {
          policy: outboundPolicy(ctx.config),
          timeoutMs: FETCH_TIMEOUT_MS,
          maxBytes: cap,
        });
        if (!fetched.ok) {
          if (fetched.reason === 'too_large' && limit?.maxBytes !== undefined) {
            return {
              code: 'reference_invalid',
              detail: formatMessage(
                { key: 'asset_bytes', params: { field: site.path, bytes: `more than ${cap}`, max: limit.maxBytes } },
                'en',
              ),
            };
          }
          return { code: 'reference_unreachable', detail: `${site.path}: ${fetched.reason}` };
        }
        const probed = await probeBytes(fetched.bytes);
        if (!probed) {
          return {
            code: 'reference_invalid',
            detail: formatMessage(
              {
                key: 'asset_format',
                params: {
                  field: site.path,
                  format: 'unknown',
                  allowed: limit?.formats?.join(', ') ?? `${site.kind} files`,
                },
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
          bytes: fetched.bytes.length,
          width,
          height,
          hasAlpha,
          durationSeconds,
          fps,
        });
        return undefined;
      })(),
    );
  }
  const fetchProblem = (await Promise.all(fetches)).find((p) => p !== undefined);
  if (fetchProblem) return fetchProblem;
  known.sort((a, b) => sites.findIndex((s) => s.path === a.path) - sites.findIndex((s) => s.path === b.path));
  const issues = limitIssues(limits, known, 'generation', complete, input.duration_seconds);
  if (issues.length === 0) return undefined;
  return { code: 'reference_invalid', detail: issues.map((issue) => formatMessage(issue.message, 'en')).join(' ') };
}

/**
 * The lengths settlement bills for a task's reference clips (the catalogue's referenceClips field):
 * per clip, the length the deployment measured, else the stored length of a library asset. Only
 * measured lengths are billed: a clip with neither is `unmeasured` (the task fails, hold released),
 * never settled at the hold's assumed length.
 */
export async function settledClipSeconds(
  ctx: Context,
  task: TaskRow,
  reported: readonly (number | null)[] | undefined,
): Promise<{ seconds?: number[] } | { unmeasured: string }> {
  const model = catalogue.get(task.model);
  const field = model?.info.pricing.referenceClips?.field;
  if (!model || !field || !task.input_json) return {};
  const input = JSON.parse(task.input_json) as Record<string, unknown>;
  const clips = Array.isArray(input[field]) ? (input[field] as unknown[]) : [];
  if (clips.length === 0) return {};
  const ids = clips.map(assetIdOf).filter((id): id is string => id !== undefined);
  const stored = ids.length
    ? clipSeconds(model.info, input, await assetsById(ctx, await ownerOfTask(ctx, task), ids))
    : undefined;
  const seconds: number[] = [];
  for (const [index, clip] of clips.entries()) {
    const measured = reported?.[index] ?? (assetIdOf(clip) !== undefined ? stored?.[index] : null) ?? null;
    if (typeof measured !== 'number') return { unmeasured: `input.${field}[${index}]` };
    seconds.push(measured);
  }
  return { seconds };
}
