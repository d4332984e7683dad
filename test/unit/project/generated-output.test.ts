/**
 * The freshness tests reuse a generator's output only while its inputs are unchanged: a changed
 * byte anywhere in them generates again.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { generatedOutput } from '../../support/generated-output';
import { tempDir } from '../../support/temp-dir';

test('the same inputs give the cached output; a changed input generates again', () => {
  const cache = tempDir('opkit-generated-cache-');
  const inputs = tempDir('opkit-generated-inputs-');
  fs.mkdirSync(path.join(inputs, 'src'));
  fs.writeFileSync(path.join(inputs, 'src', 'a.ts'), 'export const a = 1;\n');
  let runs = 0;
  const generate = (out: string) => {
    runs++;
    fs.writeFileSync(path.join(out, 'a.md'), fs.readFileSync(path.join(inputs, 'src', 'a.ts'), 'utf8'));
  };
  expect(generatedOutput('probe', [inputs], generate, cache)).toEqual({ 'a.md': 'export const a = 1;\n' });
  expect(generatedOutput('probe', [inputs], generate, cache)).toEqual({ 'a.md': 'export const a = 1;\n' });
  expect(runs).toBe(1);

  fs.writeFileSync(path.join(inputs, 'src', 'a.ts'), 'export const a = 2;\n');
  expect(generatedOutput('probe', [inputs], generate, cache)).toEqual({ 'a.md': 'export const a = 2;\n' });
  expect(runs).toBe(2);
  // A new file counts as a change too, and only the latest output is kept.
  fs.writeFileSync(path.join(inputs, 'src', 'b.ts'), '');
  generatedOutput('probe', [inputs], generate, cache);
  expect(runs).toBe(3);
  expect(fs.readdirSync(cache).filter((f) => f.startsWith('probe-'))).toHaveLength(1);
});
