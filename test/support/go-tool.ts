/**
 * A command the tests need that a script builds from the Go module proxy (testing/'s helm,
 * kstatus-check, Prometheus; bench/'s Go peers), cached outside the repository. The tiers' global set-ups build it once and pass
 * the outcome to the test files through the environment jest workers inherit, so the build
 * (minutes on a fresh machine) is part of the set-up, not of a test file's time.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/** The binary, or why there is none. */
export interface ToolOutcome {
  readonly bin?: string;
  readonly missing?: string;
}

export interface GoTool {
  /** Builds (or finds cached) the tool and tells the test files through the environment. */
  provision(): void;
  /** The tool, or why it cannot be had: as provisioned, else built now. */
  binary(): ToolOutcome;
}

/**
 * The tool `script` (a path from the repository's root) builds (it prints its path last), provisioned through the
 * environment variable `env` (empty: it could not be built, `<env>_MISSING` says why).
 */
export function goTool(options: { readonly script: string; readonly env: string; readonly what: string }): GoTool {
  const { script, env, what } = options;
  let built: ToolOutcome | undefined;
  const binary = (): ToolOutcome => {
    if (built) return built;
    const provisioned = process.env[env];
    if (provisioned !== undefined) {
      built = provisioned
        ? { bin: provisioned }
        : { missing: process.env[`${env}_MISSING`] ?? `${what} could not be built` };
      return built;
    }
    // The build's own lines (each build's time, or why it failed) go to the run's output as they come.
    const r = spawnSync('bash', [path.join(ROOT, script)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: 45 * 60_000,
    });
    built =
      r.status === 0
        ? { bin: r.stdout.trim().split('\n').pop() }
        : {
            missing: `${what} could not be built from the Go module proxy (${script} exited ${r.status ?? r.signal}; its output is above)`,
          };
    return built;
  };
  const provision = (): void => {
    if (process.env[env] !== undefined) return;
    const { bin, missing } = binary();
    process.env[env] = bin ?? '';
    if (missing) process.env[`${env}_MISSING`] = missing;
  };
  return { provision, binary };
}
