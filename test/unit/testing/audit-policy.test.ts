/**
 * The audit policy the test kit's API servers read (`--audit-policy-file`). A plane's spare API
 * servers share it and restart while others start: a conformance run's spare exited with
 * "loading audit policy file: unknown group version field audit.k8s.io/__internal", having read
 * the file while another server's start was writing it again (truncated, then written).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { auditArgs } from '../../../testing/plane/apiserver';

test('the policy is written once, whole, and a later server start leaves it as it is', () => {
  const certs = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-audit-policy-'));
  try {
    const args = auditArgs(certs, path.join(certs, 'audit.log'));
    const file = args.find((a) => a.startsWith('--audit-policy-file='))!.split('=')[1]!;
    expect(parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy' });
    // What a server reading it now holds open: a second start must not write it again.
    const before = fs.statSync(file, { bigint: true });
    fs.appendFileSync(file, '# read by a running server\n');
    auditArgs(certs, path.join(certs, 'audit-2.log'));
    expect(fs.readFileSync(file, 'utf8')).toMatch(/# read by a running server\n$/);
    expect(fs.statSync(file, { bigint: true }).ino).toBe(before.ino);
    // Nothing half-written is left beside it.
    expect(fs.readdirSync(certs)).toEqual(['audit-policy.yaml']);
  } finally {
    fs.rmSync(certs, { recursive: true, force: true });
  }
});
