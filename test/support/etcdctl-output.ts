/**
 * What etcdctl prints, read by the tests. etcdctl formats member IDs with `%16x`: an ID of fewer
 * than 16 hex digits is padded with spaces, not zeros ("Member  301f4bc73d9a8ee added"), one ID
 * in sixteen.
 */

/** The hex ID in `etcdctl member add`'s first line, as `member remove` takes it; throws when absent. */
export function addedMemberId(output: string): string {
  const id = /^Member\s+([0-9a-f]+)\s+added\b/m.exec(output)?.[1];
  if (!id) throw new Error(`no member ID in what etcdctl member add printed:\n${output}`);
  return id;
}
