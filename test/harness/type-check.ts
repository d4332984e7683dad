import { execFile } from 'node:child_process';
import * as path from 'node:path';
import integrationTeardown from './jest-global-teardown';
import unitTeardown from './unit-global-teardown';

const ROOT = path.resolve(__dirname, '..', '..');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** The kit's own sources, then the sample kind `init` copies into a new project. */
const PROJECTS = [
  ['--noEmit', '-p', '.', '--incremental', '--tsBuildInfoFile', 'node_modules/.cache/tsc/test.tsbuildinfo'],
  [
    '-p',
    'command/scaffold/files',
    '--incremental',
    '--tsBuildInfoFile',
    'node_modules/.cache/tsc/scaffold.tsbuildinfo',
  ],
];

const KEY = '__OPKIT_TYPE_CHECK__';

function tsc(args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(process.execPath, [TSC, ...args], { cwd: ROOT, maxBuffer: 64 * 2 ** 20 }, (error, stdout, stderr) => {
      resolve(error ? `tsc ${args.join(' ')} failed:\n${stdout}${stderr}` : undefined);
    });
  });
}

/**
 * `npm test` type-checks (OPKIT_TYPE_CHECK=1) while the tiers' set-ups start the control plane,
 * rather than before it: the plane's start is mostly waiting, which the type-check fills. Each
 * tier's set-up starts it (the first one to run does); the run's own global set-up, which jest
 * runs after every project's, waits for it, so a type error fails the run before any test starts,
 * as a failing `tsc` before `jest` did.
 */
export function startTypeCheck(): void {
  const store = globalThis as Record<string, unknown>;
  if (process.env.OPKIT_TYPE_CHECK !== '1' || store[KEY]) return;
  store[KEY] = (async () => {
    for (const args of PROJECTS) {
      const failed = await tsc(args);
      if (failed) return failed;
    }
    return undefined;
  })();
}

/**
 * The run's global set-up (after the tiers'): the type-check has passed, or the run stops with
 * what tsc said. Jest runs no teardown after a set-up that threw, so this one stops what the
 * tiers' set-ups started (the control plane among it) before it throws.
 */
export default async function typeCheckPassed(): Promise<void> {
  startTypeCheck();
  const failed = await ((globalThis as Record<string, unknown>)[KEY] as Promise<string | undefined> | undefined);
  if (!failed) return;
  await integrationTeardown();
  unitTeardown();
  throw new Error(failed);
}
