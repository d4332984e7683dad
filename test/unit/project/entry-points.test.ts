import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..', '..');

/** The project's modules and Node's built-ins a fresh process has loaded after requiring `entry`. */
function loadedBy(entry: string): { modules: string[]; builtins: string[] } {
  const script = `
    const before = new Set(process.moduleLoadList);
    require(${JSON.stringify(entry)});
    const builtins = process.moduleLoadList.filter((m) => !before.has(m) && m.startsWith('NativeModule '));
    const modules = Object.keys(require.cache).filter((f) => !f.includes('node_modules'));
    console.log(JSON.stringify({ modules, builtins }));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  const parsed = JSON.parse(out) as { modules: string[]; builtins: string[] };
  return { modules: parsed.modules.map((f) => path.relative(ROOT, f)), builtins: parsed.builtins };
}

test('the constructs entry loads no run-time I/O: no etcd client, hosts file or network module', () => {
  const { modules, builtins } = loadedBy('./constructs/index.ts');
  expect(modules).toContain(path.join('constructs', 'etcd', 'controller.ts'));
  expect(modules.filter((m) => /etcd-api|member-hosts|membership\.ts/.test(m))).toEqual([]);
  expect(modules.filter((m) => m.startsWith('operator') || m.startsWith('testing'))).toEqual([]);
  // Node loads some built-ins for itself; none of these is needed to synthesize YAML.
  expect(builtins.filter((b) => /NativeModule (http|https|net|tls|crypto|child_process)$/.test(b))).toEqual([]);
});

test('the reconciler entry loads the membership step only when an EtcdCluster is reconciled', () => {
  const { modules } = loadedBy('./operator/index.ts');
  expect(modules).toContain(path.join('operator', 'runtime', 'reconcile', 'builder.ts'));
  expect(modules.filter((m) => m.includes('membership.ts'))).toEqual([]);
});

test('the reconciler entry loads the OTLP exporter only when tracing is on', () => {
  const { modules } = loadedBy('./operator/index.ts');
  expect(modules).toContain(path.join('operator', 'runtime', 'observability', 'tracing.ts'));
  expect(modules.filter((m) => m.includes('otlp-tracer'))).toEqual([]);
});
