/**
 * The jsii facade (jsii/src/index.ts) cannot drift from the TypeScript constructs it wraps: every
 * prop of their props types has a twin of the same name, and every ready-made operator the
 * package exports has a class of the same name. Read from the sources, as the compiler sees them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import * as kit from '../../../constructs';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** The members of each interface, and the classes, a source file declares. */
function declarations(file: string): { interfaces: Map<string, string[]>; classes: string[] } {
  const source = ts.createSourceFile(file, fs.readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest);
  const interfaces = new Map<string, string[]>();
  const classes: string[] = [];
  for (const statement of source.statements) {
    if (ts.isInterfaceDeclaration(statement))
      interfaces.set(
        statement.name.text,
        statement.members.flatMap((m) => (m.name && ts.isIdentifier(m.name) ? [m.name.text] : [])),
      );
    if (ts.isClassDeclaration(statement) && statement.name) classes.push(statement.name.text);
  }
  return { interfaces, classes };
}

const facade = declarations('jsii/src/index.ts');

/** The props types the facade mirrors, by the file the TypeScript one is declared in. */
const MIRRORED: Readonly<Record<string, readonly string[]>> = {
  'constructs/core/operator-props.ts': ['OperatorOptions', 'OperatorResources'],
  'constructs/core/monitoring.ts': ['MonitoringOptions', 'ServiceAccountReference'],
  'constructs/core/webhooks.ts': ['CertManagerCertificate', 'CertManagerIssuer'],
  'constructs/mongodb/storage.ts': ['MongoDbStorageProps', 'MongoDbVolumeOptions', 'NfsExports'],
};

describe('the jsii facade mirrors the TypeScript constructs', () => {
  for (const [file, names] of Object.entries(MIRRORED)) {
    const typescript = declarations(file);
    for (const name of names) {
      test(`${name}: every prop of ${file}'s has a twin`, () => {
        const props = typescript.interfaces.get(name);
        expect(props?.length).toBeGreaterThan(0);
        expect(facade.interfaces.get(name)?.sort()).toEqual(props?.sort());
      });
    }
  }

  test('every ready-made operator the package exports, and MongoDbStorage, has a class of the same name', () => {
    const readyMade = Object.entries(kit)
      .filter(([name, value]) => typeof value === 'function' && name.endsWith('Operator'))
      .filter(([, value]) => (value as { prototype: unknown }).prototype instanceof kit.Operator)
      .map(([name]) => name)
      .filter((name) => name !== 'ConstructOperator');
    expect(readyMade.length).toBeGreaterThanOrEqual(5);
    expect(facade.classes).toEqual(expect.arrayContaining([...readyMade, 'MongoDbStorage']));
  });
});
