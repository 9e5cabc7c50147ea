import { assetRow, type AssetRow, type LibraryOwner } from '../assets/library.js';
import { ensureUnlocked, storeNewAsset } from '../assets/storage.js';
import { outboundPolicy } from '../config.js';
import type { Context } from '../context.js';
import { ApiError, fieldIssue, invalidInput } from '../errors.js';
import { newId } from '../ids.js';
import { peek } from './byte-reader.js';
import { headWanted, sniff } from './probe.js';
import { FetchFailure, openCapped } from './remote-fetch.js';

/** The contract's ImportFileRequest.url: a direct HTTPS link to a `.safetensors` file. */
const LORA_LINK = /^https:\/\/[^\s?#]+\.safetensors([?#]\S*)?$/;
/** With the test-only insecure switch, loopback receivers may serve plain http. */
const LORA_LINK_INSECURE = /^https?:\/\/[^\s?#]+\.safetensors([?#]\S*)?$/;

/** The asset name a link gives: its last path segment, decoded. */
function nameFromLink(url: string): string {
  const segment = new URL(url).pathname.split('/').pop() ?? 'lora.safetensors';
  try {
    return decodeURIComponent(segment).slice(0, 255) || 'lora.safetensors';
  } catch {
    return segment.slice(0, 255);
  }
}

/**
 * POST /files/import: fetches a LoRA `.safetensors` file through the SSRF guard (connect-time
 * address check, no redirects, size cap, time limit) and stores it as an asset of kind `lora`,
 * usable as `loras[].path` (`service://a/<id>`). Locked storage is refused before anything is
 * fetched; a link that cannot be fetched is 400 40017; bytes that are not safetensors 400 40011.
 */
export async function importLora(
  ctx: Context,
  owner: LibraryOwner,
  url: string,
  name: string | undefined,
): Promise<AssetRow> {
  const policy = outboundPolicy(ctx.config);
  if (!(policy.allowInsecure ? LORA_LINK_INSECURE : LORA_LINK).test(url))
    throw invalidInput([fieldIssue('url', 'pattern', 'pattern')]);
  await ensureUnlocked(ctx, owner);
  const opened = await openCapped(url, {
    policy,
    timeoutMs: ctx.config.importTimeoutMs,
    maxBytes: ctx.config.importMaxBytes,
  });
  if (!opened.ok) return importFailed(ctx, opened);
  try {
    // The head tells the type before anything is stored; the rest streams to the blob store (a LoRA's probe is its type).
    const { head, rest } = await peek(opened.body, headWanted);
    const probed = await sniff(head);
    if (!probed || probed.kind !== 'lora') throw new ApiError('file_type_not_allowed', { param: 'url' });
    const id = newId('a');
    const blobKey = `library/${id}.safetensors`;
    const row = assetRow(
      owner,
      { id, name: name ?? nameFromLink(url), probed, bytes: 0, blobKey, source: 'import' },
      ctx.clock.now(),
    );
    await storeNewAsset(ctx, owner, row, rest);
    return row;
  } catch (error) {
    if (error instanceof FetchFailure) return importFailed(ctx, error);
    throw error;
  } finally {
    opened.close();
  }
}

function importFailed(ctx: Context, failure: { reason: string; detail: string }): never {
  ctx.log.warn({ reason: failure.reason, detail: failure.detail }, 'LoRA import failed');
  throw new ApiError('import_failed', { param: 'url' });
}
