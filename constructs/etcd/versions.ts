import { compareText } from '../contract/compare';

/** etcd release numbers (`x.y.z`) and the upgrades etcd supports: one minor at a time, never down a minor. */

export type Version = readonly [number, number, number];

export function parseVersion(v: string): Version | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

export function compareVersions(a: string, b: string): number {
  const [x, y] = [parseVersion(a), parseVersion(b)];
  if (!x || !y) return compareText(a, b);
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}

/** The lowest of some versions (the cluster's version is its oldest member's). */
export function lowestVersion(versions: readonly string[]): string | undefined {
  return [...versions].sort(compareVersions)[0];
}

/**
 * Why etcd cannot go from `running` to `wanted` member by member, or undefined when it can:
 * a downgrade to an earlier minor (or major) release, or an upgrade that skips a minor.
 * Patch releases within a minor go either way.
 */
export function unsupportedVersionChange(
  running: string,
  wanted: string,
): { reason: string; message: string } | undefined {
  const [r, w] = [parseVersion(running), parseVersion(wanted)];
  if (!r || !w) return undefined;
  if (w[0] < r[0] || (w[0] === r[0] && w[1] < r[1])) {
    return {
      reason: 'DowngradeRefused',
      message: `spec.version ${wanted} would downgrade the cluster from ${running} to an earlier minor release, which etcd does not support member by member; the members keep ${running}`,
    };
  }
  if (w[0] !== r[0] || w[1] > r[1] + 1) {
    return {
      reason: 'UpgradeSkipsMinor',
      message: `spec.version ${wanted} skips a minor release from ${running}; etcd upgrades one minor at a time (first ${r[0]}.${r[1] + 1}.x); the members keep ${running}`,
    };
  }
  return undefined;
}
