import type { Handlers } from '../../../generated/routes.js';
import { verifyMediaLink } from '../../blobs/blob-store.js';
import { ApiError } from '../../errors.js';
import type { ApiRequest } from '../api-request.js';

const MIME_BY_EXTENSION: Record<string, string> = { mp4: 'video/mp4', mov: 'video/quicktime', png: 'image/png', jpg: 'image/jpeg', webp: 'image/webp', mp3: 'audio/mpeg', wav: 'audio/wav' };

/** GET /media/{objectKey}: the bytes behind a signed, expiring link; an expired or altered link is 403. */
export const mediaHandlers: Pick<Handlers<ApiRequest>, 'getMedia'> = {
  async getMedia(req) {
    const key = req.param('objectKey');
    if (!verifyMediaLink(req.ctx.secret, key, req.query('expires'), req.query('sig'), req.ctx.clock.now())) throw new ApiError('forbidden');
    const object = await req.ctx.blobs.read(key);
    if (!object) throw new ApiError('file_not_found');
    const extension = key.split('.').pop() ?? '';
    return {
      status: 200,
      raw: object.stream,
      headers: { 'Content-Type': MIME_BY_EXTENSION[extension] ?? 'application/octet-stream', 'Content-Length': String(object.size), 'Cache-Control': 'private, max-age=60' },
    };
  },
};
