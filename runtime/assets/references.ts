import type { ModelInfo } from '../../generated/catalogue.js';
import { priceUnderBook } from '../accounts/book-price.js';
import type { FieldIssue, PriceFacts } from '../../generated/support.js';
import type { Context } from '../context.js';
import { fieldIssue, invalidInput } from '../errors.js';
import type { PreparedRequest } from '../tasks/prepare-request.js';
import { assetIdOf, type AssetRow, type LibraryOwner } from './library.js';
import { limitIssues, type KnownReference } from './limits.js';

/** One place in a request's input that holds a file reference. */
export interface ReferenceSite {
  path: string;
  field: string;
  /** The kind of file the place takes, where it says one. */
  kind?: string;
  value: string;
}

const NESTED_IMAGE = /\.image_urls\[\d+\]$/;
const NESTED_LORA = /^input\.loras\[\d+\]\.path$/;

/** Nested places of the field dictionary that take files: elements[].image_urls[] and loras[].path. */
function nestedKind(path: string): string | undefined {
  if (NESTED_IMAGE.test(path)) return 'image';
  if (NESTED_LORA.test(path)) return 'lora';
  return undefined;
}

/** The sites found so far, and the paths among them (a path is listed once, its first finding kept). */
interface Found {
  sites: ReferenceSite[];
  seen: Set<string>;
}

function add(found: Found, site: ReferenceSite): void {
  if (found.seen.has(site.path)) return;
  found.seen.add(site.path);
  found.sites.push(site);
}

function walk(found: Found, value: unknown, path: string, field: string): void {
  if (typeof value === 'string') {
    if (assetIdOf(value) !== undefined) add(found, { path, field, kind: nestedKind(path), value });
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) walk(found, value[i], `${path}[${i}]`, field);
  } else if (typeof value === 'object' && value !== null) {
    for (const key of Object.keys(value)) walk(found, (value as Record<string, unknown>)[key], `${path}.${key}`, field);
  }
}

/** Whether any string at any depth of `value` is a `service://` reference (what referenceSites' asset sites are). */
function holdsAssetReference(value: unknown): boolean {
  if (typeof value === 'string') return assetIdOf(value) !== undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (holdsAssetReference(value[i])) return true;
  } else if (typeof value === 'object' && value !== null) {
    for (const key of Object.keys(value)) if (holdsAssetReference((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

/**
 * Every reference of an input: the model's reference fields (`info.referenceFields`, with their
 * kinds), and any other `service://a/<id>` string at any depth (elements, loras).
 */
export function referenceSites(info: ModelInfo, input: Record<string, unknown>): ReferenceSite[] {
  const found: Found = { sites: [], seen: new Set() };
  for (const [field, kind] of info.referenceFields) {
    const value = input[field];
    if (typeof value === 'string') add(found, { path: `input.${field}`, field, kind, value });
    if (Array.isArray(value))
      for (let i = 0; i < value.length; i++) {
        const item = value[i];
        if (typeof item === 'string') add(found, { path: `input.${field}[${i}]`, field, kind, value: item });
      }
  }
  for (const field of Object.keys(input)) walk(found, input[field], `input.${field}`, field);
  return found.sites;
}

/** The live assets among `ids` that belong to the owner's library, by id. */
export async function assetsById(ctx: Context, owner: LibraryOwner, ids: string[]): Promise<Map<string, AssetRow>> {
  const unique = [...new Set(ids)].filter((id) => /^[A-Za-z0-9_-]{1,64}$/.test(id));
  if (unique.length === 0) return new Map();
  const rows = await ctx.db.kysely
    .selectFrom('assets')
    .selectAll()
    .where('account_id', '=', owner.accountId)
    .where('library', '=', owner.library)
    .where('deleted_at', 'is', null)
    .where('id', 'in', unique)
    .execute();
  return new Map(rows.map((row) => [row.id, row]));
}

export function knownFromAsset(site: ReferenceSite, row: AssetRow): KnownReference {
  return {
    path: site.path,
    field: site.field,
    kind: site.kind,
    fileKind: row.kind,
    format: row.format,
    bytes: row.bytes,
    width: row.width,
    height: row.height,
    hasAlpha: row.has_alpha === null ? null : row.has_alpha === 1,
    durationSeconds: row.duration_seconds,
    fps: row.fps,
  };
}

/**
 * The acceptance check of `service://` references, before anything is held: each must name a
 * live asset of the caller's library (else 400 40001, asset_not_found at its path), and the
 * stored metadata must meet the model's limits marked `checked: acceptance` (every limit except
 * those the specification says the model enforces during generation). External URLs are not
 * fetched here: their own limits wait for generation, but a total the known lengths already
 * exceed is refused now (an unknown length can only add to it). Returns the measured reference clip
 * lengths for the price (null where a clip is an external URL).
 */
export async function checkAssetReferences(
  ctx: Context,
  owner: LibraryOwner,
  info: ModelInfo,
  input: Record<string, unknown>,
): Promise<PriceFacts> {
  // An input without a `service://` reference has nothing to check (its sites would be external URLs only).
  if (!holdsAssetReference(input)) return {};
  const sites = referenceSites(info, input);
  const assetSites = sites.filter((s) => assetIdOf(s.value) !== undefined);
  if (assetSites.length === 0) return {};
  const assets = await assetsById(
    ctx,
    owner,
    assetSites.map((s) => assetIdOf(s.value)!),
  );
  const issues: FieldIssue[] = [];
  const known: KnownReference[] = [];
  for (const site of assetSites) {
    const row = assets.get(assetIdOf(site.value)!);
    if (!row) issues.push(fieldIssue(site.path, 'asset', 'asset_not_found'));
    else known.push(knownFromAsset(site, row));
  }
  // Totals are judged in full only when every reference is an asset (an external clip's length is unknown until it is fetched).
  issues.push(
    ...limitIssues(info.referenceLimits, known, 'acceptance', known.length === sites.length, input.duration_seconds),
  );
  if (issues.length) throw invalidInput(issues);
  return { referenceClipSeconds: clipSeconds(info, input, assets) };
}

/** One entry per clip of the model's billed reference-clip field: the asset's measured length, or null. */
export function clipSeconds(
  info: ModelInfo,
  input: Record<string, unknown>,
  assets: Map<string, AssetRow>,
): (number | null)[] | undefined {
  const field = info.pricing.referenceClips?.field;
  const clips = field ? input[field] : undefined;
  if (!Array.isArray(clips) || clips.length === 0) return undefined;
  return clips.map((clip) => {
    const id = assetIdOf(clip);
    return (id !== undefined ? assets.get(id)?.duration_seconds : null) ?? null;
  });
}

/**
 * Runs the acceptance check on a prepared request (createTask, quote, retry and the compatible
 * layer) and prices it again with the measured clip lengths, so that the hold of a request whose
 * every reference clip is an asset uses the real lengths.
 */
export async function applyAssetReferences(ctx: Context, owner: LibraryOwner, request: PreparedRequest): Promise<void> {
  const facts = await checkAssetReferences(ctx, owner, request.model.info, request.input);
  if (facts.referenceClipSeconds?.some((s) => s !== null))
    request.price = priceUnderBook(request.model, request.input, facts, request.priceBook);
}
