import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The kit's own test tools beside the control plane's binaries: every etcd release there is a
 * binary of (`etcd` and `etcd-v<version>`), by the version each reports — the etcd operator's
 * tests run them as members — etcdctl, whose backup tests run the Job's commands, and etcdutl,
 * which the etcd image carries beside it.
 */
export function etcdTools(binDir: string | undefined): {
  releases: Record<string, string>;
  etcdctl?: string;
  etcdutl?: string;
} {
  const releases: Record<string, string> = {};
  if (!binDir) return { releases };
  for (const f of fs.readdirSync(binDir).filter((n) => n === 'etcd' || /^etcd-v\d/.test(n))) {
    const bin = path.join(binDir, f);
    const version = /etcd Version: (\S+)/.exec(execFileSync(bin, ['--version'], { encoding: 'utf8' }))?.[1];
    if (version) releases[version] = bin;
  }
  const tool = (name: string) => (fs.existsSync(path.join(binDir, name)) ? path.join(binDir, name) : undefined);
  return { releases, etcdctl: tool('etcdctl'), etcdutl: tool('etcdutl') };
}
