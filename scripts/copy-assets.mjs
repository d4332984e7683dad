// Copies what the compiled library needs besides JavaScript: the harness's build scripts and its
// kwok stage, which the control plane uses from beside its own module.
import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

for (const file of readdirSync('testing').filter((f) => f.endsWith('.sh') || f.endsWith('.yaml'))) {
  copyFileSync(join('testing', file), join('lib/testing', file));
}
