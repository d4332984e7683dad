/** The KeyValueStore reconciler: what the operator's image runs. */
import { runOperator } from '../../operator/run';
import { keyValueStoreController } from './key-value-store';

runOperator({ controllers: [keyValueStoreController] }).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
