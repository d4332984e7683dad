// Code-health figures for a closing note or a review: `any`, casts, longest functions, long lines,
// exported names of each entry. Read-only; prints a table. Usage: node --import tsx scripts/code-metrics.ts
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = join(__dirname, '..');
const folders = ['constructs', 'operator'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

interface FunctionLength {
  readonly where: string;
  readonly lines: number;
}

const files = folders.flatMap((folder) => sourceFiles(join(root, folder)));
let anys = 0;
let casts = 0;
let doubleCasts = 0;
let longLines = 0;
let lines = 0;
const functions: FunctionLength[] = [];

for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const fileLines = text.split('\n');
  lines += fileLines.length;
  longLines += fileLines.filter((line) => line.length > 120).length;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.AnyKeyword) anys++;
    if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) {
      const isConst = ts.isTypeReferenceNode(node.type) && node.type.typeName.getText(source) === 'const';
      if (!isConst) casts++;
      if (
        ts.isAsExpression(node) &&
        ts.isAsExpression(node.expression) &&
        node.expression.type.kind === ts.SyntaxKind.UnknownKeyword
      )
        doubleCasts++;
    }
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = node.name?.getText(source) ?? (ts.isConstructorDeclaration(node) ? 'constructor' : '(anonymous)');
      functions.push({ where: `${relative(root, file)}:${start + 1} ${name}`, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

functions.sort((a, b) => b.lines - a.lines);
console.log(`files ${files.length}, lines ${lines}`);
console.log(`any ${anys}, casts ${casts} (as unknown as ${doubleCasts}), lines over 120: ${longLines}`);
console.log('longest functions:');
for (const f of functions.filter((f, i) => i < 12 || f.lines > 60))
  console.log(`  ${String(f.lines).padStart(4)}  ${f.where}`);
console.log(`functions over 60 lines: ${functions.filter((f) => f.lines > 60).length}`);
