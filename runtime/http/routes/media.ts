import type { Handlers } from '../../../generated/routes.js';
import { verifyMediaLink } from '../../blobs/blob-store.js';
import { ApiError } from '../../errors.js';
import type { ApiRequests } from '../api-request.js';

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
 * GET /media/{objectKey}: the bytes behind a signed, expiring link. An expired link (40304) and an
 * altered or forged one (40305) are 403, each with its own message. The link is the credential,
 * and clients show results on pages of their own origin: the bytes may be embedded cross-origin
 * (every other answer is same-origin only).
 */
export const mediaHandlers: Pick<Handlers<ApiRequests>, 'getMedia'> = {
  async getMedia(req) {
    const key = req.params.objectKey;
    const link = verifyMediaLink(req.ctx.secret, key, req.query.expires, req.query.sig, req.ctx.clock.now());
    if (link !== 'valid') throw new ApiError(link === 'expired' ? 'link_expired' : 'link_invalid');
    const object = await req.ctx.blobs.read(key);
    if (!object) throw new ApiError('file_not_found');
    const extension = key.split('.').pop() ?? '';
    return {
      status: 200,
      raw: object.stream,
      headers: {
        'Content-Type': MIME_BY_EXTENSION[extension] ?? 'application/octet-stream',
        'Content-Length': String(object.size),
        'Cache-Control': 'private, max-age=60',
        'Cross-Origin-Resource-Policy': 'cross-origin',
      },
    };
  },
};
