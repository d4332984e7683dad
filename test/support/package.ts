import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/** `npm pack` of the kit (its prepack compiles it) into `destination`; the tarball's path. */
export function packKit(destination: string): string {
  const r = spawnSync('npm', ['pack', '--json', '--pack-destination', destination], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm pack failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  const packed = JSON.parse(r.stdout) as { filename: string }[];
  const file = packed[0]?.filename;
  if (!file) throw new Error(`npm pack named no tarball:\n${r.stdout}`);
  return path.join(destination, file);
}
