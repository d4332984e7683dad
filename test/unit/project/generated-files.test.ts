import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { importCrds } from '../../../scripts/import';
import { generatedOutput } from '../../support/generated-output';
import { readTree, synthProject } from '../../support/synth';

const ROOT = path.resolve(__dirname, '..', '..', '..');

// dist/ and imports/ are committed so users can read and apply them without building. These
// tests fail when either is stale: run `npm run synth` then `npm run import`.
describe('committed generated files are current', () => {
  const synth = synthProject();

  test('dist/ equals a fresh synth', () => {
    expect(readTree(path.join(ROOT, 'dist'))).toEqual(synth.files);
  });

  test('imports/ equals a fresh `cdk8s import` of the synthesized CRDs', () => {
    const lock = path.join(ROOT, 'package-lock.json');
    const fresh = generatedOutput('imports', [synth.dir, path.join(ROOT, 'scripts', 'import.ts'), lock], (out) => {
      importCrds(out, [synth.dir, path.join(synth.dir, 'crds')]);
    });
    expect(Object.keys(fresh)).toContain('cache.example.com.ts');
    const committed = readTree(path.join(ROOT, 'imports'));
    expect(Object.keys(committed).sort()).toEqual(Object.keys(fresh).sort());
    for (const file of Object.keys(fresh)) {
      expect({ file, text: committed[file] }).toEqual({ file, text: fresh[file] });
    }
    // Importing leaves the project's cdk8s.yaml alone.
    expect(fs.readFileSync(path.join(ROOT, 'cdk8s.yaml'), 'utf8')).not.toMatch(/opkit-import|\/tmp\//);
  }, 60_000);

  // The API reference is generated from the doc comments: run `npm run docs`.
  test('docs/api/ equals a fresh typedoc of the three entry points', () => {
    const sources = ['constructs', 'operator', 'testing', 'command', 'imports'].map((d) => path.join(ROOT, d));
    const settings = ['typedoc.json', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
    const fresh = generatedOutput('typedoc', [...sources, ...settings.map((f) => path.join(ROOT, f))], (out) => {
      const r = spawnSync(
        process.execPath,
        [path.join(ROOT, 'node_modules', 'typedoc', 'bin', 'typedoc'), '--logLevel', 'Warn', '--out', out],
        { cwd: ROOT, encoding: 'utf8' },
      );
      expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    });
    expect(Object.keys(fresh)).toEqual(
      expect.arrayContaining([
        'README.md',
        // A page per module, listing its members, and a page per member.
        'cdk8s-operator-kit/README.md',
        'cdk8s-operator-kit/reconciler/README.md',
        'cdk8s-operator-kit/testing/README.md',
        'cdk8s-operator-kit/classes/Operator.md',
      ]),
    );
    expect(fresh['cdk8s-operator-kit/README.md']).toContain('[ConstructOperator](classes/ConstructOperator.md)');
    expect(fresh['cdk8s-operator-kit/classes/ConstructOperator.md']).toContain('# Class: ConstructOperator');
    expect(readTree(path.join(ROOT, 'docs', 'api'))).toEqual(fresh);
  }, 60_000);
});
