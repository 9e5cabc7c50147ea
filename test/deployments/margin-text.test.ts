import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { bodyD, IMAGE, MODEL_D, MODEL_MINI } from '../http/helpers.js';
import { ROOT } from '../support/root.js';
import { modelsSection } from '../support/deployments-yaml.js';
import { startMediaforge, waitForTask, type MediaforgeProcess } from './support.js';
import { createOn } from './profile-deployments.js';

/**
 * Issue 37, point 8: `mediaforge report margin` without --json marks succeeded tasks whose
 * deployment declares no cost (they count 0) instead of showing their whole revenue as margin: not
 * known when none of a line's successes has a cost, overstated when some lack one. A real serve
 * with two simulator upstreams, one with a declared cost and one without, and the CLI.
 */
const run = promisify(execFile);

describe('the margin report marks tasks without a declared cost (issue 37)', () => {
  let proc: MediaforgeProcess | undefined;
  afterEach(async () => {
    await proc?.stop();
    proc = undefined;
  });

  it('a line whose successes declare no cost says the margin is not known; the total says it is overstated', async () => {
    proc = await startMediaforge(
      'margin-text',
      { MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml' },
      {
        'deployments.yaml': [
          'upstreams:',
          '  priced: { kind: simulator, cost: { perVideo: "0.10" } }',
          '  free: { kind: simulator }',
          ...modelsSection({ [MODEL_D]: 'priced', [MODEL_MINI]: 'free' }),
        ].join('\n'),
      },
    );
    const { apiKey } = await proc.account(1000);
    const bodies = [
      bodyD('a priced fox, Picture 1'),
      {
        model: MODEL_MINI,
        input: { prompt: 'a free kite, Picture 1 as the kite', reference_image_urls: [IMAGE], duration_seconds: 4 },
      },
    ];
    for (const body of bodies) {
      const taskId = await createOn(proc.url, apiKey, body);
      expect(await waitForTask(proc.url, apiKey, taskId)).toMatchObject({ state: 'succeeded' });
    }
    const { stdout } = await run(process.execPath, [join(ROOT, 'bin/mediaforge.js'), 'report', 'margin'], {
      env: { ...process.env, ...proc.env },
    });
    const lines = stdout.trim().split('\n');
    const free = lines.find((line) => line.startsWith(`${MODEL_MINI} on free:`));
    expect(free).toMatch(/, margin not known \(no cost declared for its 1 succeeded task\)$/);
    expect(lines.find((line) => line.startsWith(`${MODEL_D} on priced:`))).toMatch(/, margin \d+\.\d{6} USD$/);
    expect(lines.find((line) => line.startsWith('total: '))).toMatch(
      /^total: .*, margin \d+\.\d{6} USD, overstated \(1 succeeded task without a declared cost\)$/,
    );
    // After the total, the same tasks by price book (issue 40): both at the published prices.
    expect(lines.find((line) => line.startsWith('book '))).toMatch(/^book default: 2 tasks, revenue /);
  }, 60_000);
});
