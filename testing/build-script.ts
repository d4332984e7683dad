/**
 * Runs one of testing/'s build scripts (build-control-plane.sh, build-node.sh, build-traefik.sh):
 * each builds or finds its programs in the cache and prints their path last.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

/** The path `script` (a file name in testing/) printed last; its progress on stderr when verbose. */
export function runBuildScript(script: string, verbose: boolean): string {
  const out = execFileSync('bash', [path.join(__dirname, script)], {
    // Explicitly: this module's view of the environment (the cache and versions it names), which in
    // a jest test file is not the one child processes would otherwise inherit.
    env: process.env,
    stdio: ['ignore', 'pipe', verbose ? 'inherit' : 'ignore'],
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  return out.trim().split('\n').pop() ?? '';
}
