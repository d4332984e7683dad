/**
 * Regenerates the typed classes in imports/ from CRDs, offline: our operators' CRDs (dist/) and
 * the third-party CRDs we write resources for (dist/crds/). One `cdk8s import` runs per API group,
 * because two imports into the same group would overwrite each other's file.
 *
 * Usage: npm run import [-- --output <dir>]
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';

const ROOT = path.resolve(__dirname, '..');
const SOURCES = [path.join(ROOT, 'dist'), path.join(ROOT, 'dist', 'crds')];

interface Crd {
  kind: string;
  spec: { group: string };
}

/** Every CustomResourceDefinition in the YAML files of the given directories, by API group. */
export function collectCrds(dirs: readonly string[] = SOURCES): Map<string, Crd[]> {
  const byGroup = new Map<string, Crd[]>();
  for (const dir of dirs) {
    if (!fs.existsSync(dir)) continue;
    for (const file of fs
      .readdirSync(dir)
      .filter((f) => /\.ya?ml$/.test(f))
      .sort()) {
      for (const doc of parseAllDocuments(fs.readFileSync(path.join(dir, file), 'utf8'))) {
        const obj = doc.toJS() as Crd | null;
        if (obj?.kind !== 'CustomResourceDefinition') continue;
        byGroup.set(obj.spec.group, [...(byGroup.get(obj.spec.group) ?? []), obj]);
      }
    }
  }
  return byGroup;
}

/** Runs `cdk8s import` for each group into `outDir`; returns the groups imported. */
export function importCrds(outDir: string, dirs: readonly string[] = SOURCES): string[] {
  const byGroup = collectCrds(dirs);
  if (byGroup.size === 0) throw new Error('no CustomResourceDefinitions found; run `npm run synth` first');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-import-'));
  const cli = path.join(ROOT, 'node_modules', '.bin', 'cdk8s');
  try {
    for (const [group, crds] of byGroup) {
      const file = path.join(tmp, `${group}.yaml`);
      fs.writeFileSync(file, crds.map((c) => JSON.stringify(c)).join('\n---\n'));
      // Run outside the project: `cdk8s import <file>` appends the file to the cdk8s.yaml it
      // finds in its working directory, and these are temp files.
      execFileSync(
        cli,
        ['import', '--no-check-upgrade', '--language', 'typescript', '--output', path.resolve(outDir), file],
        {
          cwd: tmp,
          stdio: ['ignore', 'pipe', 'inherit'],
          env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false' },
        },
      );
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return [...byGroup.keys()].sort();
}

if (require.main === module) {
  const i = process.argv.indexOf('--output');
  const outDir = path.resolve((i >= 0 ? process.argv[i + 1] : undefined) ?? path.join(ROOT, 'imports'));
  const groups = importCrds(outDir);
  console.log(`imported ${groups.join(', ')} into ${path.relative(process.cwd(), outDir) || '.'}`);
}
