/**
 * `npm run package:jsii`: the kit packed (as `npm pack` makes it), then its ready-made operators
 * compiled with jsii and packaged for Python and Java in build/jsii (jsii/build.ts).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildJsiiPackages } from '../jsii/build';

const ROOT = path.resolve(__dirname, '..');
const packDir = path.join(ROOT, 'build', 'jsii-pack');
fs.rmSync(packDir, { recursive: true, force: true });
fs.mkdirSync(packDir, { recursive: true });
const packed = spawnSync('npm', ['pack', '--json', '--pack-destination', packDir], { cwd: ROOT, encoding: 'utf8' });
if (packed.status !== 0) throw new Error(`npm pack failed:\n${packed.stderr}`);
const filename = (JSON.parse(packed.stdout) as { filename: string }[])[0]?.filename ?? '';
const built = buildJsiiPackages({
  kitTarball: path.join(packDir, filename),
  workDir: path.join(ROOT, 'build', 'jsii'),
});
process.stdout.write(`Python wheel: ${path.relative(ROOT, built.wheel)}\n`);
if (built.mavenRepository)
  process.stdout.write(`Java (a Maven repository): ${path.relative(ROOT, built.mavenRepository)}\n`);
