import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { copySpec, loadError, runGeneratorCheck } from '../support/spec-copy.js';

const FAMILY_D = 'spec/models/vendor_d/family_d/reference-to-video.yaml';

/** One broken edit of a real model file per row, and the file:line message it must produce. */
const BROKEN: [string, { edit: (text: string) => string; want: RegExp }][] = [
  [
    'unknown top-level key',
    {
      edit: (t) => t.replace('title:', 'titel: x\ntitle:'),
      want: /reference-to-video\.yaml:2:1: the file must NOT have additional properties "titel"/,
    },
  ],
  [
    'unknown field name',
    {
      edit: (t) => t.replace('  prompt: { required: true }', '  promt: { required: true }'),
      want: /reference-to-video\.yaml:6:3: unknown field "promt"/,
    },
  ],
  [
    'rate with three decimals',
    {
      edit: (t) => t.replace('rate: "5.55"', 'rate: "5.555"'),
      want: /reference-to-video\.yaml:\d+:\d+: \/pricing\/rates\/0\/rate must match pattern/,
    },
  ],
  [
    'a resolution with no rate',
    {
      edit: (t) => t.replace('    - { resolution: 2k, rate: "8.7" }\n', ''),
      want: /reference-to-video\.yaml:\d+:\d+: no rate row matches resolution=2k/,
    },
  ],
  [
    'a rate row that never applies',
    {
      edit: (t) =>
        t.replace(
          '    - { resolution: 768p, rate: "5.55" }',
          '    - { rate: "1" }\n    - { resolution: 768p, rate: "5.55" }',
        ),
      want: /this rate row never applies/,
    },
  ],
  [
    'unknown marker style',
    {
      edit: (t) => t.replace('markers: picture-angle-video', 'markers: pictures'),
      want: /reference-to-video\.yaml:4:1: unknown marker style "pictures"/,
    },
  ],
  [
    'id not matching the path',
    {
      edit: (t) => t.replace('id: vendor_d/family_d/reference-to-video', 'id: vendor_d/family_x/reference-to-video'),
      want: /reference-to-video\.yaml:1:1: id "vendor_d\/family_x\/reference-to-video" does not match the file's path/,
    },
  ],
  [
    'a rule naming a field the model lacks',
    {
      edit: (t) => t.replace('    field: resolution\n', '    field: bitrate_mode\n'),
      want: /rule "duration-4-only-at-768p" names "bitrate_mode"/,
    },
  ],
  [
    'default outside the values',
    {
      edit: (t) => t.replace('default: 768p', 'default: 1080p'),
      want: /default "1080p" of resolution is not one of its values/,
    },
  ],
  [
    'duplicate key',
    {
      edit: (t) => t.replace('title:', 'summary: twice\ntitle:'),
      want: /reference-to-video\.yaml:4:1: duplicated mapping key/,
    },
  ],
  [
    'an output codec for a resolution the model lacks',
    {
      edit: (t) => t.replace('\npricing:', '\noutput: { codecs: { 4k: h264 } }\npricing:'),
      want: /reference-to-video\.yaml:\d+:\d+: "4k" is not a value of resolution \(768p, 2k\)/,
    },
  ],
  [
    'an unknown output codec',
    {
      edit: (t) => t.replace('\npricing:', '\noutput: { codecs: { 2k: av1 } }\npricing:'),
      want: /reference-to-video\.yaml:\d+:\d+: unknown codec "av1" \(h264, hevc-10bit\)/,
    },
  ],
  [
    'a frame rate that is not whole',
    {
      edit: (t) => t.replace('\npricing:', '\noutput: { frameRate: 23.976 }\npricing:'),
      want: /reference-to-video\.yaml:\d+:\d+: \/output\/frameRate must be integer/,
    },
  ],
  [
    'rule with a missing part',
    {
      edit: (t) => t.replace('    values: [768p]\n', ''),
      want: /reference-to-video\.yaml:\d+:\d+: \/rules\/0 must have required property 'values'/,
    },
  ],
];

describe('a broken model file fails generation with file:line', () => {
  let copy: ReturnType<typeof copySpec> | undefined;
  afterEach(() => copy?.remove());

  it.each(BROKEN)('%s', (_name, { edit, want }) => {
    copy = copySpec();
    const path = join(copy.root, FAMILY_D);
    writeFileSync(path, edit(readFileSync(path, 'utf8')));
    expect(loadError(copy.root).message).toMatch(want);
  });

  it('a container of spec/shared/output.yaml without brands', () => {
    copy = copySpec();
    const vocabulary = join(copy.root, 'spec/shared/output.yaml');
    writeFileSync(
      vocabulary,
      readFileSync(vocabulary, 'utf8').replace('extension: mov, brands: ["qt  "] }', 'extension: mov }'),
    );
    expect(loadError(copy.root).message).toMatch(/spec\/shared\/output\.yaml:\d+:\d+: container mov needs brands/);
  });

  it('an output_format value that names no container of spec/shared/output.yaml', () => {
    copy = copySpec();
    const fields = join(copy.root, 'spec/shared/fields.yaml');
    writeFileSync(fields, readFileSync(fields, 'utf8').replace('enum: [mp4, mov]', 'enum: [mp4, mov, webm]'));
    expect(loadError(copy.root).message).toMatch(
      /family_a-2\.5\/reference-to-video\.yaml:\d+:\d+: output_format value "webm" is not a container of spec\/shared\/output\.yaml/,
    );
  });

  it('the CLI prints the problems, not a stack trace, and exits 1', () => {
    copy = copySpec();
    const path = join(copy.root, FAMILY_D);
    writeFileSync(path, readFileSync(path, 'utf8').replace('markers: picture-angle-video', 'markers: pictures'));
    const { status, stderr } = runGeneratorCheck(copy.root);
    expect(status).toBe(1);
    expect(stderr.trim()).toBe(
      `${FAMILY_D}:4:1: unknown marker style "pictures": it is not in spec/shared/markers.yaml`,
    );
  });
});
