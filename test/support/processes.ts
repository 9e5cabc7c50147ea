import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './root.js';

/**
 * `mediaforge serve --role api|worker` as its own process, resolved once it listens (api: with its
 * URL) or once its worker runs. For tests that need several processes on one database; the
 * caller kills them (SIGKILL is fine: the database is the truth).
 */
export function startProcess(
  role: 'api' | 'worker',
  env: NodeJS.ProcessEnv,
  port = 0,
): Promise<{ child: ChildProcess; url?: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [join(ROOT, 'bin/mediaforge.js'), 'serve', '--role', role, '--port', String(port)],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /mediaforge listening on (http:\/\/\S+)/.exec(output);
      if (listening) resolve({ child, url: listening[1] });
      else if (/mediaforge worker running/.test(output)) resolve({ child });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`${role} exited with ${code}: ${output.slice(-2000)}`)));
  });
}
