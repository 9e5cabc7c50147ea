import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadCatalogue } from '../../generator/load/catalogue.js';
import { SpecError } from '../../generator/load/spec-error.js';
import { ROOT } from '../support/catalogue.js';
import { copySpec } from '../support/spec-copy.js';

const FAMILY_D = 'spec/models/vendor_d/family_d/reference-to-video.yaml';

/** One broken edit of a real model file per row, and the file:line message it must produce. */
const BROKEN: [string, { edit: (text: string) => string; want: RegExp }][] = [
  ['unknown top-level key', { edit: (t) => t.replace('title:', 'titel: x\ntitle:'), want: /reference-to-video\.yaml:2:1: the file must NOT have additional properties "titel"/ }],
  ['unknown field name', { edit: (t) => t.replace('  prompt: { required: true }', '  promt: { required: true }'), want: /reference-to-video\.yaml:6:3: unknown field "promt"/ }],
  ['rate with three decimals', { edit: (t) => t.replace('rate: "5.55"', 'rate: "5.555"'), want: /reference-to-video\.yaml:\d+:\d+: \/pricing\/rates\/0\/rate must match pattern/ }],
  ['a resolution with no rate', { edit: (t) => t.replace('    - { resolution: 2k, rate: "8.7" }\n', ''), want: /reference-to-video\.yaml:\d+:\d+: no rate row matches resolution=2k/ }],
  ['a rate row that never applies', { edit: (t) => t.replace('    - { resolution: 768p, rate: "5.55" }', '    - { rate: "1" }\n    - { resolution: 768p, rate: "5.55" }'), want: /this rate row never applies/ }],
  ['unknown marker style', { edit: (t) => t.replace('markers: picture-angle-video', 'markers: pictures'), want: /reference-to-video\.yaml:4:1: unknown marker style "pictures"/ }],
  ['id not matching the path', { edit: (t) => t.replace('id: vendor_d/family_d/reference-to-video', 'id: vendor_d/family_x/reference-to-video'), want: /reference-to-video\.yaml:1:1: id "vendor_d\/family_x\/reference-to-video" does not match the file's path/ }],
  ['a rule naming a field the model lacks', { edit: (t) => t.replace('    field: resolution\n', '    field: bitrate_mode\n'), want: /rule "duration-4-only-at-768p" names "bitrate_mode"/ }],
  ['default outside the values', { edit: (t) => t.replace('default: 768p', 'default: 1080p'), want: /default "1080p" of resolution is not one of its values/ }],
  ['duplicate key', { edit: (t) => t.replace('title:', 'summary: twice\ntitle:'), want: /reference-to-video\.yaml:4:1: duplicated mapping key/ }],
  ['rule with a missing part', { edit: (t) => t.replace('    values: [768p]\n', ''), want: /reference-to-video\.yaml:\d+:\d+: \/rules\/0 must have required property 'values'/ }],
];

describe('a broken model file fails generation with file:line', () => {
  let copy: ReturnType<typeof copySpec> | undefined;
  afterEach(() => copy?.remove());

  it.each(BROKEN)('%s', (_name, { edit, want }) => {
    copy = copySpec();
    const path = join(copy.root, FAMILY_D);
    writeFileSync(path, edit(readFileSync(path, 'utf8')));
    let error: unknown;
    try {
      loadCatalogue(copy.root);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SpecError);
    expect((error as Error).message).toMatch(want);
  });

  it('the CLI prints the problems, not a stack trace, and exits 1', () => {
    copy = copySpec();
    const path = join(copy.root, FAMILY_D);
    writeFileSync(path, readFileSync(path, 'utf8').replace('markers: picture-angle-video', 'markers: pictures'));
    let stderr = '';
    let status = 0;
    try {
      execFileSync(join(ROOT, 'node_modules/.bin/tsx'), [join(ROOT, 'generator/cli.ts'), '--check', '--root', copy.root], { stdio: 'pipe' });
    } catch (e) {
      const failure = e as { status: number; stderr: Buffer };
      status = failure.status;
      stderr = failure.stderr.toString();
    }
    expect(status).toBe(1);
    expect(stderr.trim()).toBe(`${FAMILY_D}:4:1: unknown marker style "pictures": it is not in spec/shared/markers.yaml`);
  });
});
