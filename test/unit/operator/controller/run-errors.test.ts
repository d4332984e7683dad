/**
 * A user's entry point written as the README shows it (`runOperator(...).then(code =>
 * process.exit(code))`, no catch): what it cannot start with is one clear line and an exit code,
 * never an unhandled rejection's stack trace.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');

function runEntry(args: string[], env: Record<string, string> = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-entry-'));
  const entry = path.join(dir, 'reconciler.ts');
  fs.writeFileSync(
    entry,
    [
      `import { runOperator } from ${JSON.stringify(path.join(ROOT, 'operator'))};`,
      `import { memcachedController } from ${JSON.stringify(path.join(ROOT, 'constructs'))};`,
      'runOperator({ controllers: [memcachedController] }).then((code) => process.exit(code));',
    ].join('\n'),
  );
  return spawnSync(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, KUBECONFIG: '', KUBERNETES_SERVICE_HOST: '', HOME: dir, ...env },
  });
}

test.each([
  ['a kubeconfig that does not exist', ['--kubeconfig=/nonexistent'], {}, /kubeconfig \/nonexistent: ENOENT/],
  ['no cluster configuration at all', [], {}, /no cluster to talk to/],
])(
  '%s: one line naming it, exit code 1, no stack trace',
  (_what, args, env, message) => {
    const r = runEntry(args, env);
    const output = r.stdout + r.stderr;
    expect(r.status).toBe(1);
    expect(output).toMatch(message);
    expect(output).not.toMatch(/^\s+at /m);
  },
  60_000,
);
