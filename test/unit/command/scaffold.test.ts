/** `init` and `create kind` on disk (their generated tests run for real in test/integration/scaffold.test.ts). */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createKind, initProject } from '../../../command/scaffold';
import { kindNames } from '../../../command/scaffold/templates';

const kitPackage = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8'));
const made: string[] = [];
const tmp = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-scaffold-unit-'));
  made.push(dir);
  return dir;
};

afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

test('names of a kind: exports, files and the controller name', () => {
  expect(kindNames('WebSite', 'sites.example.com', 'v1')).toEqual({
    kind: 'WebSite',
    group: 'sites.example.com',
    version: 'v1',
    camel: 'webSite',
    file: 'web-site',
    lower: 'website',
  });
});

test('init: a project named for its directory, its kind from the name, the packages the kit is tested with', () => {
  const dir = path.join(tmp(), 'shop-operator');
  const files = initProject(dir);
  expect(files).toEqual(
    expect.arrayContaining([
      'package.json',
      'reconciler.ts',
      'kinds/shop.ts',
      'test/shop.integration.test.ts',
      'test/conformance.integration.test.ts',
    ]),
  );
  expect(new Set(files).size).toBe(files.length);
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  expect(pkg.name).toBe('shop-operator');
  expect(pkg.dependencies['cdk8s-operator-kit']).toBe(`^${kitPackage.version}`);
  for (const name of ['cdk8s', 'cdk8s-plus-27', 'constructs'])
    expect(pkg.dependencies[name]).toBe(kitPackage.devDependencies[name]);
  expect(pkg.devDependencies.esbuild).toBe(kitPackage.devDependencies.esbuild);
  const kind = fs.readFileSync(path.join(dir, 'kinds', 'shop.ts'), 'utf8');
  expect(kind).toContain("group: 'shop.example.com'");
  expect(kind).toContain("versions: ['v1alpha1']");
});

test('init --namespaces: the operator serves those namespaces (watchNamespaces); without it every one, and app.ts shows how to scope', () => {
  const scoped = path.join(tmp(), 'shop-operator');
  initProject(scoped, { watchNamespaces: ['team-a', 'team-b', 'team-a'] });
  expect(fs.readFileSync(path.join(scoped, 'app.ts'), 'utf8')).toMatch(
    /^ {4}watchNamespaces: \['team-a', 'team-b'\],$/m,
  );
  const open = path.join(tmp(), 'shop-operator');
  initProject(open);
  const app = fs.readFileSync(path.join(open, 'app.ts'), 'utf8');
  expect(app).not.toMatch(/^ {4}watchNamespaces/m);
  expect(app).toMatch(/^ {4}\/\/ watchNamespaces: \['team-a', 'team-b'\],$/m);
  const refused = tmp();
  expect(() => initProject(refused, { name: 'shop', watchNamespaces: ['Team_A'] })).toThrow(
    /--namespaces: "Team_A" is not a namespace name/,
  );
  expect(fs.readdirSync(refused)).toEqual([]);
});

test('init refuses a directory with a project, and writes nothing over an existing file', () => {
  const dir = tmp();
  fs.writeFileSync(path.join(dir, 'package.json'), '{}');
  expect(() => initProject(dir, { kind: 'Shop', group: 'shop.example.com' })).toThrow(/already has a package.json/);
  const other = tmp();
  fs.writeFileSync(path.join(other, 'README.md'), 'mine');
  expect(() => initProject(other, { kind: 'Shop', group: 'shop.example.com' })).toThrow(
    /README.md already exist.*nothing was written/,
  );
  expect(fs.readdirSync(other)).toEqual(['README.md']);
});

test('create kind: wired in before the markers, in order; bad names and a lost marker are refused', () => {
  const dir = tmp();
  initProject(dir, { name: 'ops', kind: 'Shop', group: 'shop.example.com' });
  createKind(dir, { kind: 'Cart', group: 'cart.example.com', version: 'v1beta1' });
  const controllers = fs.readFileSync(path.join(dir, 'controllers.ts'), 'utf8');
  expect(controllers.indexOf('shopController,')).toBeLessThan(controllers.indexOf('cartController,'));
  expect(controllers).toMatch(/^ {2}cartController,\n {2}\/\/ cdk8s-operator-kit: controllers$/m);
  expect(() => createKind(dir, { kind: 'Cart', group: 'cart.example.com' })).toThrow(/already has the kind Cart/);
  expect(() => createKind(dir, { kind: 'cart', group: 'cart.example.com' })).toThrow(/UpperCamelCase/);
  expect(() => createKind(dir, { kind: 'Box', group: 'box' })).toThrow(/--group "box": an API group/);
  expect(() => createKind(dir, { kind: 'Box', group: 'box.example.com', version: '1' })).toThrow(/--version "1"/);
  fs.writeFileSync(path.join(dir, 'controllers.ts'), controllers.replace('// cdk8s-operator-kit: samples', ''));
  expect(() => createKind(dir, { kind: 'Box', group: 'box.example.com' })).toThrow(/lost its line/);
  expect(fs.existsSync(path.join(dir, 'kinds', 'box.ts'))).toBe(false);
});
