// Copies what the compiled library needs besides JavaScript: the harness's build scripts, which
// the control plane runs from beside its own module.
import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

for (const file of readdirSync('test/harness').filter((f) => f.endsWith('.sh'))) {
  copyFileSync(join('test/harness', file), join('lib/test/harness', file));
}
