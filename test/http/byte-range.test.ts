import { describe, expect, it } from 'vitest';
import { answerRange, type RangeAnswer } from '../../runtime/http/byte-range.js';
import { mediaValidators, notModified, rangeStillApplies } from '../../runtime/http/media-validators.js';

const SIZE = 1000;
const whole: RangeAnswer = { kind: 'whole' };
const unsatisfiable: RangeAnswer = { kind: 'unsatisfiable' };
const part = (start: number, end: number): RangeAnswer => ({ kind: 'partial', start, end });

/** RFC 9110 section 14.1.2 and 14.2, for an object of SIZE bytes unless `size` says otherwise. */
const RANGES: [string, { given: { header: string | undefined; size?: number }; want: RangeAnswer }][] = [
  ['no header', { given: { header: undefined }, want: whole }],
  ['a-b', { given: { header: 'bytes=0-499' }, want: part(0, 499) }],
  ['a-', { given: { header: 'bytes=500-' }, want: part(500, 999) }],
  ['-n', { given: { header: 'bytes=-100' }, want: part(900, 999) }],
  ['-n longer than the object', { given: { header: 'bytes=-5000' }, want: part(0, 999) }],
  ['b past the end, clipped', { given: { header: 'bytes=990-5000' }, want: part(990, 999) }],
  ['the last byte', { given: { header: 'bytes=999-999' }, want: part(999, 999) }],
  ['a at the size', { given: { header: 'bytes=1000-' }, want: unsatisfiable }],
  ['a past the size', { given: { header: 'bytes=1001-2000' }, want: unsatisfiable }],
  ['-0', { given: { header: 'bytes=-0' }, want: unsatisfiable }],
  ['any range of an empty object', { given: { header: 'bytes=0-', size: 0 }, want: unsatisfiable }],
  ['a suffix of an empty object', { given: { header: 'bytes=-1', size: 0 }, want: unsatisfiable }],
  ['unit in capitals', { given: { header: 'Bytes=0-0' }, want: part(0, 0) }],
  ['spaces around the list', { given: { header: 'bytes= 1-2 ' }, want: part(1, 2) }],
  ['an empty list element', { given: { header: 'bytes=1-2, ,' }, want: part(1, 2) }],
  ['b before a: invalid, ignored', { given: { header: 'bytes=5-1' }, want: whole }],
  ['several ranges', { given: { header: 'bytes=0-1,5-9' }, want: whole }],
  ['several, one malformed', { given: { header: 'bytes=0-1,x' }, want: whole }],
  ['another unit', { given: { header: 'items=0-1' }, want: whole }],
  ['no equals sign', { given: { header: 'bytes 0-1' }, want: whole }],
  ['nothing after the unit', { given: { header: 'bytes=' }, want: whole }],
  ['letters', { given: { header: 'bytes=a-b' }, want: whole }],
  ['a sign', { given: { header: 'bytes=+1-2' }, want: whole }],
  ['a decimal', { given: { header: 'bytes=1.5-2' }, want: whole }],
  ['a lone dash', { given: { header: 'bytes=-' }, want: whole }],
  ['a huge last position', { given: { header: 'bytes=1-99999999999999999999999' }, want: part(1, 999) }],
  ['a huge first position', { given: { header: 'bytes=99999999999999999999-' }, want: unsatisfiable }],
  ['a huge suffix', { given: { header: 'bytes=-99999999999999999999' }, want: part(0, 999) }],
];

describe('answerRange', () => {
  it.each(RANGES)('%s', (_name, { given, want }) => {
    expect(answerRange(given.header, given.size ?? SIZE)).toEqual(want);
  });
});

const validators = mediaValidators('outputs/t.mp4', { size: 1234, modifiedAt: Date.UTC(2026, 10, 26, 12, 0, 0, 750) });
const OLDER = 'Wed, 25 Nov 2026 12:00:00 GMT';

const CONDITIONS: [
  string,
  {
    given: { ifNoneMatch?: string; ifModifiedSince?: string; ifRange?: string };
    want: { notModified: boolean; range: boolean };
  },
][] = [
  ['no conditions', { given: {}, want: { notModified: false, range: true } }],
  ['If-None-Match the tag', { given: { ifNoneMatch: validators.etag }, want: { notModified: true, range: true } }],
  [
    'If-None-Match the weak tag',
    { given: { ifNoneMatch: `W/${validators.etag}` }, want: { notModified: true, range: true } },
  ],
  [
    'If-None-Match in a list',
    { given: { ifNoneMatch: `"a", ${validators.etag}` }, want: { notModified: true, range: true } },
  ],
  ['If-None-Match *', { given: { ifNoneMatch: '*' }, want: { notModified: true, range: true } }],
  ['If-None-Match another tag', { given: { ifNoneMatch: '"a"' }, want: { notModified: false, range: true } }],
  ['If-None-Match garbage', { given: { ifNoneMatch: 'nonsense' }, want: { notModified: false, range: true } }],
  [
    'If-Modified-Since the Last-Modified (milliseconds dropped)',
    { given: { ifModifiedSince: validators.lastModified }, want: { notModified: true, range: true } },
  ],
  ['If-Modified-Since older', { given: { ifModifiedSince: OLDER }, want: { notModified: false, range: true } }],
  ['If-Modified-Since garbage', { given: { ifModifiedSince: 'yesterday' }, want: { notModified: false, range: true } }],
  [
    'If-None-Match wins over If-Modified-Since',
    {
      given: { ifNoneMatch: '"a"', ifModifiedSince: validators.lastModified },
      want: { notModified: false, range: true },
    },
  ],
  ['If-Range the tag', { given: { ifRange: validators.etag }, want: { notModified: false, range: true } }],
  ['If-Range the weak tag', { given: { ifRange: `W/${validators.etag}` }, want: { notModified: false, range: false } }],
  ['If-Range another tag', { given: { ifRange: '"a"' }, want: { notModified: false, range: false } }],
  ['If-Range the date', { given: { ifRange: validators.lastModified }, want: { notModified: false, range: true } }],
  ['If-Range an older date', { given: { ifRange: OLDER }, want: { notModified: false, range: false } }],
  ['If-Range garbage', { given: { ifRange: 'nonsense' }, want: { notModified: false, range: false } }],
];

describe('media validators', () => {
  it.each(CONDITIONS)('%s', (_name, { given, want }) => {
    expect({
      notModified: notModified(validators, given.ifNoneMatch, given.ifModifiedSince),
      range: rangeStillApplies(validators, given.ifRange),
    }).toEqual(want);
  });

  it('the ETag is strong and follows the key, the size and the write time', () => {
    expect(validators.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(mediaValidators('outputs/t.mp4', { size: 1234, modifiedAt: Date.UTC(2026, 10, 26, 12, 0, 0, 750) })).toEqual(
      validators,
    );
    const others = [
      mediaValidators('outputs/u.mp4', { size: 1234, modifiedAt: Date.UTC(2026, 10, 26, 12, 0, 0, 750) }),
      mediaValidators('outputs/t.mp4', { size: 1235, modifiedAt: Date.UTC(2026, 10, 26, 12, 0, 0, 750) }),
      mediaValidators('outputs/t.mp4', { size: 1234, modifiedAt: Date.UTC(2026, 10, 26, 12, 0, 0, 751) }),
    ];
    for (const other of others) expect(other.etag).not.toBe(validators.etag);
    expect(validators.lastModified).toBe('Thu, 26 Nov 2026 12:00:00 GMT');
  });
});
