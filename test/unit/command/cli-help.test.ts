/** Each command answers `--help` with its own usage, and a usage error shows that command's usage. */
import { COMMAND_HELP, main } from '../../../command/cli';

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const stdout = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out += String(chunk);
    return true;
  });
  const stderr = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    err += String(chunk);
    return true;
  });
  try {
    return { code: await main(argv), out, err };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
}

test.each(Object.keys(COMMAND_HELP))('%s --help prints its own usage and exits 0', async (command) => {
  const { code, out } = await run([command, '--help']);
  expect(code).toBe(0);
  expect(out).toMatch(new RegExp(`^Usage: cdk8s-operator-kit ${command}\\b`));
  // Only this command's section, not the whole list.
  expect(out).not.toContain('Commands:');
});

test('-h works too; after `--` it belongs to the reconciler run starts', async () => {
  expect((await run(['plan', '-h'])).out).toMatch(/^Usage: cdk8s-operator-kit plan /);
  const passedOn = await run(['run', '--', '--help']);
  // run needs --entry: a usage error of run's own, not its help.
  expect(passedOn.code).toBe(2);
  expect(passedOn.err).toMatch(/Usage: cdk8s-operator-kit run --entry/);
});

test("a usage error shows that command's usage", async () => {
  const { code, err } = await run(['create', 'kind']);
  expect(code).toBe(2);
  expect(err).toContain('create kind: give one kind');
  expect(err).toContain('Usage: cdk8s-operator-kit create kind <Kind>');
  expect(err).not.toContain('Commands:');
});
