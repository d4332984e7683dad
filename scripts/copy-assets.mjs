// Copies what the compiled library needs besides JavaScript: the harness's build scripts and its
// kwok stages, which the control plane uses from beside its own module, the real node's Go
// sources its build script compiles (testing/node/*.go), and the files init writes that are
// kept as real files (command/scaffold/files).
import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

for (const file of readdirSync('testing').filter((f) => f.endsWith('.sh') || f.endsWith('.yaml'))) {
  copyFileSync(join('testing', file), join('lib/testing', file));
}
if (!existsSync('lib/testing/node')) mkdirSync('lib/testing/node', { recursive: true });
for (const file of readdirSync('testing/node').filter((f) => f.endsWith('.go'))) {
  copyFileSync(join('testing/node', file), join('lib/testing/node', file));
}
mkdirSync('lib/command/scaffold/files', { recursive: true });
for (const file of readdirSync('command/scaffold/files')) {
  copyFileSync(join('command/scaffold/files', file), join('lib/command/scaffold/files', file));
}
