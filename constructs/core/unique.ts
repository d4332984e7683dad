import type { Construct, IConstruct } from 'constructs';

const claims = new WeakMap<IConstruct, Map<string, string>>();

/**
 * Claims `key` for `construct` in its construct tree (its App): a second claim of the same key
 * throws `message(path of the first claimant)`. How the kit refuses two operators of one name, or
 * the same CRD twice, at synth rather than as colliding objects at apply.
 */
export function claimUnique(construct: Construct, key: string, message: (firstPath: string) => string): void {
  const root = construct.node.root;
  const claimed = claims.get(root) ?? new Map<string, string>();
  claims.set(root, claimed);
  const first = claimed.get(key);
  if (first !== undefined) throw new Error(message(first));
  claimed.set(key, construct.node.path);
}
