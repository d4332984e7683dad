/** The StaticSite reconciler: what the operator's image runs. */
import { runOperator } from '../../operator/run';
import { staticSiteController } from './static-site';

runOperator({ controllers: [staticSiteController] }).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
