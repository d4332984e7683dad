/** The BlogSite reconciler: what the operator's image runs. */
import { runOperator } from '../../operator/run';
import { blogSiteController } from './blog-site';

runOperator({ controllers: [blogSiteController] }).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
