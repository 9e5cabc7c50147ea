import { catalogue } from '../../generated/catalogue.js';
import type { LibraryOwner } from '../assets/library.js';
import { ApiError, fieldIssue, invalidInput } from '../errors.js';
import type { SessionUser } from './users.js';

/**
 * The library playground uploads go to: the playground account's personal library (the one its
 * tasks read service:// references from). Its storage plan follows the user's own lifetime
 * purchases, recorded on the API account (the free playground credits are a grant, not a purchase),
 * with at least the playground's allowance (spec/storage-plans.yaml `playground`): a new user can
 * try a model with an uploaded reference, as docs/console.md promises.
 */
export function playgroundLibrary(user: SessionUser): LibraryOwner {
  return { accountId: user.playgroundAccountId, library: 'personal', planAccountId: user.accountId, playground: true };
}

/** The kind of file a model's reference field takes; 400 for an unknown model or a field that takes no file. */
export function referenceKind(model: string | undefined, field: string | undefined): string {
  const info = model ? catalogue.get(model)?.info : undefined;
  if (!info) throw new ApiError('invalid_parameter', { param: 'model' });
  const kind = info.referenceFields.find(([name]) => name === field)?.[1];
  if (!kind) throw new ApiError('invalid_parameter', { param: 'field' });
  return kind;
}

/** X-File-Name is URI-encoded by the page (headers are Latin-1); control characters are dropped. */
export function fileNameOf(header: string | string[] | undefined): string {
  let name = typeof header === 'string' ? header : '';
  try {
    name = decodeURIComponent(name);
  } catch {
    /* keep it as sent */
  }
  name = name
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .slice(0, 255);
  return name || 'upload';
}

export function declaredSize(header: string | undefined): number {
  const size = header !== undefined && /^\d{1,15}$/.test(header) ? Number(header) : Number.NaN;
  if (!Number.isSafeInteger(size)) throw new ApiError('invalid_parameter', { param: 'Content-Length' });
  if (size < 1) throw invalidInput([fieldIssue('size', 'minimum', 'minimum', { limit: 1 })]);
  return size;
}
