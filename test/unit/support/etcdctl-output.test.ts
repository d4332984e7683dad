import { addedMemberId } from '../../support/etcdctl-output';

describe("etcdctl's output", () => {
  test('the ID of a member added, 16 hex digits', () => {
    expect(addedMemberId('Member 42ff4e300072008d added to cluster 42fc9546a501bca4\n')).toBe('42ff4e300072008d');
  });

  test('the ID of a member added as a learner, padded with a space to 16 places (seen in CI)', () => {
    const printed = [
      'Member  301f4bc73d9a8ee added as learner to cluster 42fc9546a501bca4',
      '',
      'ETCD_NAME="intruder"',
    ].join('\n');
    expect(addedMemberId(printed)).toBe('301f4bc73d9a8ee');
  });

  test('no ID: an error that quotes what etcdctl said', () => {
    expect(() => addedMemberId('Error: etcdserver: unhealthy cluster')).toThrow(/unhealthy cluster/);
  });
});
