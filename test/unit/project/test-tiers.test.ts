import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '../../..');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the jest configs' own CommonJS list
const LONG: readonly string[] = require('../../../test/harness/long-integration-files.js');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const full = require('../../../jest.config.js');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const long = require('../../../jest.long.config.js');

const integrationFiles = fs
  .readdirSync(path.join(ROOT, 'test/integration'))
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => `/test/integration/${f}`);

const ignoredBy = (project: { testPathIgnorePatterns?: string[] }) => (file: string) =>
  (project.testPathIgnorePatterns ?? []).some((p) => new RegExp(p).test(file));

describe("the integration tier's files, between npm test and npm run test:long", () => {
  test('every long file named exists', () => {
    for (const name of LONG) expect(integrationFiles).toContain(`/test/integration/${name}.test.ts`);
  });

  test('each file runs in exactly one of the two: npm test leaves out the long ones, test:long runs only them', () => {
    const integration = full.projects.find((p: { displayName: string }) => p.displayName === 'integration');
    const [longProject] = long.projects;
    const inNpmTest = integrationFiles.filter((f) => !ignoredBy(integration)(f));
    const inLong = integrationFiles.filter((f) =>
      longProject.testMatch.some((m: string) => m.replace('<rootDir>', '') === f),
    );
    expect(inLong).toHaveLength(LONG.length);
    expect(inNpmTest.filter((f) => inLong.includes(f))).toEqual([]);
    expect(inNpmTest.length + inLong.length).toBe(integrationFiles.length);
  });
});
