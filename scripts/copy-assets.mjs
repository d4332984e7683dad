// Copies what the compiled library needs besides JavaScript: the harness's build scripts, which
// the control plane runs from beside its own module.
import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

for (const file of readdirSync('testing').filter((f) => f.endsWith('.sh'))) {
  copyFileSync(join('testing', file), join('lib/testing', file));
}
