import { Readable } from 'node:stream';
import type { Handlers } from '../../../generated/routes.js';
import { verifyMediaLink } from '../../blobs/blob-store.js';
import { ApiError } from '../../errors.js';
import type { ApiRequests } from '../api-request.js';
import { answerRange } from '../byte-range.js';
import { mediaValidators, notModified, rangeStillApplies } from '../media-validators.js';

const MIME_BY_EXTENSION: Record<string, string> = {
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  png: 'image/png',
  jpg: 'image/jpeg',
  webp: 'image/webp',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
};

/**
 * GET (and HEAD) /media/{objectKey}: the bytes behind a signed, expiring link. An expired link
 * (40304) and an altered or forged one (40305) are 403, each with its own message, before any
 * other header is looked at. The link is the credential, and clients show results on pages of
 * their own origin: the bytes may be embedded cross-origin (every other answer is same-origin only).
 *
 * Players seek with byte ranges: one range is read from the store as a range and answered 206;
 * validators (ETag, Last-Modified) let a client keep its copy (304) or resume safely (If-Range).
 * On a store that hands out its own links (S3, MEDIAFORGE_MEDIA_LINKS=redirect, its default) a
 * valid link answers 302 to the store; `proxy` streams through the service as on the other stores.
 */
export const mediaHandlers: Pick<Handlers<ApiRequests>, 'getMedia'> = {
  async getMedia(req) {
    const key = req.params.objectKey;
    const link = verifyMediaLink(req.ctx.secret, key, req.query.expires, req.query.sig, req.ctx.clock.now());
    if (link !== 'valid') throw new ApiError(link === 'expired' ? 'link_expired' : 'link_invalid');
    const info = await req.ctx.blobs.stat(key);
    if (!info) throw new ApiError('file_not_found');
    const extension = key.split('.').pop() ?? '';
    const contentType = MIME_BY_EXTENSION[extension] ?? 'application/octet-stream';
    const { blobs, config, clock } = req.ctx;
    // A store that serves its objects itself (S3): the bytes come from it, through a link that dies
    // no later than this one; ranges and validators are then the store's.
    if (blobs.presignGet && config.mediaLinks === 'redirect') {
      const location = await blobs.presignGet(key, Number(req.query.expires) * 1000, clock.now(), contentType);
      const redirect: Record<string, string> = {
        Location: location,
        'Cache-Control': 'no-store',
        'Cross-Origin-Resource-Policy': 'cross-origin',
      };
      return { status: 302, raw: noBody(), headers: redirect };
    }
    const validators = mediaValidators(key, info);
    const cache = {
      ETag: validators.etag,
      'Last-Modified': validators.lastModified,
      'Cache-Control': 'private, max-age=60',
      'Cross-Origin-Resource-Policy': 'cross-origin',
    };
    const headers = req.headers;
    if (notModified(validators, headers['If-None-Match'], headers['If-Modified-Since']))
      return { status: 304, raw: noBody(), headers: cache };

    const described = {
      ...cache,
      'Content-Type': contentType,
      'Accept-Ranges': 'bytes',
    };
    // Range handling is defined for GET only (RFC 9110 section 14.2): a HEAD describes the whole file.
    const isGet = req.raw.method === 'GET';
    const range =
      isGet && rangeStillApplies(validators, headers['If-Range'])
        ? answerRange(headers.Range, info.size)
        : ({ kind: 'whole' } as const);
    if (range.kind === 'unsatisfiable')
      throw new ApiError('range_not_satisfiable', {
        headers: { 'Accept-Ranges': 'bytes', 'Content-Range': `bytes */${info.size}` },
      });
    if (!isGet) return { status: 200, raw: noBody(), headers: { ...described, 'Content-Length': String(info.size) } };

    if (range.kind === 'partial') {
      const part = await req.ctx.blobs.readRange(key, range);
      if (!part) throw new ApiError('file_not_found');
      return {
        status: 206,
        raw: part.stream,
        headers: {
          ...described,
          'Content-Range': `bytes ${range.start}-${range.end}/${info.size}`,
          'Content-Length': String(range.end - range.start + 1),
        },
      };
    }
    const object = await req.ctx.blobs.read(key);
    if (!object) throw new ApiError('file_not_found');
    return { status: 200, raw: object.stream, headers: { ...described, 'Content-Length': String(object.size) } };
  },
};

/**
 * The body of a 304 or a HEAD: an empty stream, not null, which Fastify would serialize (a JSON
 * `null`) or, on HEAD, answer with `Content-Length: 0` instead of the file's size.
 */
function noBody(): NodeJS.ReadableStream {
  return Readable.from([]);
}
