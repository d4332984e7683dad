/** The reconciler: the operator's image runs this (`npm run image`), `npm run operator` runs it here. */
import { runOperator } from 'cdk8s-operator-kit/reconciler';
import { controllers } from './controllers';

runOperator({ controllers }).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
