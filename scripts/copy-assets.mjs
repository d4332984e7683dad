// Copies what the compiled library needs besides JavaScript, and the examples the docs cite
// (lib/examples, below): the harness's build scripts and its kwok stages, which the control plane uses from beside its own module, the real node's Go
// sources its build script compiles (testing/node/*.go) and its sample images' files, and the
// files init writes that are kept as real files (command/scaffold/files).
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

for (const file of readdirSync('testing').filter((f) => f.endsWith('.sh') || f.endsWith('.yaml'))) {
  copyFileSync(join('testing', file), join('lib/testing', file));
}
if (!existsSync('lib/testing/node')) mkdirSync('lib/testing/node', { recursive: true });
for (const file of readdirSync('testing/node').filter((f) => f.endsWith('.go'))) {
  copyFileSync(join('testing/node', file), join('lib/testing/node', file));
}
// The sample images' configuration files and entrypoints (testing/node/debian-images.ts).
for (const file of readdirSync('testing/node/image-files', { recursive: true, withFileTypes: true })) {
  if (!file.isFile()) continue;
  const from = join(file.parentPath, file.name);
  mkdirSync(join('lib', from, '..'), { recursive: true });
  copyFileSync(from, join('lib', from));
}
// The sample kind's files keep their folders, its TypeScript as `.template` (the package ships no
// TypeScript source); its tsconfig.json is for checking them here only.
for (const file of readdirSync('command/scaffold/files', { recursive: true, withFileTypes: true })) {
  if (!file.isFile() || file.name === 'tsconfig.json') continue;
  const from = join(file.parentPath, file.name);
  const to = join('lib', from) + (file.name.endsWith('.ts') ? '.template' : '');
  mkdirSync(join(to, '..'), { recursive: true });
  copyFileSync(from, to);
}
// The examples the docs cite, as a user writes them: TypeScript to read and copy (nothing imports
// them), importing the kit by its package name. A relative import of anything else in the
// repository would not resolve in the package: refused here, so the copy cannot go stale.
const KIT_IMPORTS = { '../../constructs': 'cdk8s-operator-kit', '../../operator/run': 'cdk8s-operator-kit/reconciler' };
for (const example of ['static-site', 'key-value-store', 'blog-site']) {
  const to = join('lib/examples', example);
  mkdirSync(to, { recursive: true });
  for (const file of readdirSync(join('examples', example)).filter((f) => f.endsWith('.ts'))) {
    const source = readFileSync(join('examples', example, file), 'utf8');
    const rewritten = source.replace(/from '(\.\.\/\.\.\/[^']*)'/g, (_, from) => {
      const name = KIT_IMPORTS[from];
      if (!name) throw new Error(`examples/${example}/${file} imports ${from}, which the package does not have`);
      return `from '${name}'`;
    });
    writeFileSync(join(to, file), rewritten);
  }
}
