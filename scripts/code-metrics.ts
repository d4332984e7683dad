// Code-health figures for a closing note or a review: `any`, casts, longest and most complex
// functions, long lines, and the imports between the rooms (which folder imports which). Read-only;
// prints a table. Usage: node --import tsx scripts/code-metrics.ts
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = join(__dirname, '..');
/** Product code: what the package ships. */
const folders = ['constructs', 'operator', 'command', 'testing'].filter((f) => existsSync(join(root, f)));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

interface FunctionFigure {
  readonly where: string;
  readonly lines: number;
  readonly complexity: number;
}

/** The room a file lives in: its top folder, with the contract apart from the rest of constructs. */
function roomOf(file: string): string {
  const rel = relative(root, file);
  if (rel === 'constructs/contract' || rel.startsWith('constructs/contract/')) return 'constructs/contract';
  return rel.split('/')[0] ?? rel;
}

/** Cyclomatic complexity as ESLint's `complexity` rule counts it: 1 + one per branch. */
function branches(node: ts.Node): number {
  switch (node.kind) {
    case ts.SyntaxKind.IfStatement:
    case ts.SyntaxKind.ConditionalExpression:
    case ts.SyntaxKind.ForStatement:
    case ts.SyntaxKind.ForInStatement:
    case ts.SyntaxKind.ForOfStatement:
    case ts.SyntaxKind.WhileStatement:
    case ts.SyntaxKind.DoStatement:
    case ts.SyntaxKind.CatchClause:
      return 1;
    case ts.SyntaxKind.CaseClause:
      return 1;
    case ts.SyntaxKind.BinaryExpression: {
      const op = (node as ts.BinaryExpression).operatorToken.kind;
      return op === ts.SyntaxKind.AmpersandAmpersandToken ||
        op === ts.SyntaxKind.BarBarToken ||
        op === ts.SyntaxKind.QuestionQuestionToken ||
        op === ts.SyntaxKind.AmpersandAmpersandEqualsToken ||
        op === ts.SyntaxKind.BarBarEqualsToken ||
        op === ts.SyntaxKind.QuestionQuestionEqualsToken
        ? 1
        : 0;
    }
    case ts.SyntaxKind.Parameter:
      return (node as ts.ParameterDeclaration).initializer ? 1 : 0;
    default:
      return 0;
  }
}

function complexityOf(fn: ts.Node): number {
  let count = 1;
  const visit = (node: ts.Node): void => {
    if (node !== fn && ts.isFunctionLike(node)) return;
    count += branches(node);
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(fn, visit);
  return count;
}

const files = folders.flatMap((folder) => sourceFiles(join(root, folder)));
let anys = 0;
let casts = 0;
let doubleCasts = 0;
let longLines = 0;
let lines = 0;
const castsPerFile = new Map<string, number>();
const functions: FunctionFigure[] = [];
const arrows = new Map<string, Set<string>>();

for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const fileLines = text.split('\n');
  lines += fileLines.length;
  longLines += fileLines.filter((line) => line.length > 120).length;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const from = roomOf(file);
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.AnyKeyword) anys++;
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      const spec = (node.moduleSpecifier as ts.StringLiteral).text;
      if (spec.startsWith('.')) {
        const to = roomOf(resolve(dirname(file), spec));
        if (to !== from) {
          const key = `${from} → ${to}`;
          arrows.set(key, (arrows.get(key) ?? new Set()).add(relative(root, file)));
        }
      }
    }
    if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) {
      const isConst = ts.isTypeReferenceNode(node.type) && node.type.typeName.getText(source) === 'const';
      if (!isConst) {
        casts++;
        castsPerFile.set(relative(root, file), (castsPerFile.get(relative(root, file)) ?? 0) + 1);
      }
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
      functions.push({
        where: `${relative(root, file)}:${start + 1} ${name}`,
        lines: end - start + 1,
        complexity: complexityOf(node),
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

console.log(`folders ${folders.join(', ')}: files ${files.length}, lines ${lines}`);
console.log(`any ${anys}, casts ${casts} (as unknown as ${doubleCasts}), lines over 120: ${longLines}`);
console.log(
  `casts per file (top): ${[...castsPerFile]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([f, n]) => `${f} ${n}`)
    .join(', ')}`,
);
console.log('longest functions:');
const byLength = [...functions].sort((a, b) => b.lines - a.lines);
for (const f of byLength.filter((f, i) => i < 8 || f.lines > 60))
  console.log(`  ${String(f.lines).padStart(4)}  ${f.where}`);
console.log(`functions over 60 lines: ${functions.filter((f) => f.lines > 60).length}`);
console.log('most complex functions:');
const byComplexity = [...functions].sort((a, b) => b.complexity - a.complexity);
for (const f of byComplexity.filter((f, i) => i < 8 || f.complexity > 15))
  console.log(`  ${String(f.complexity).padStart(4)}  ${f.where}`);
console.log(`functions over complexity 15: ${functions.filter((f) => f.complexity > 15).length}`);
console.log('imports between rooms (files importing):');
for (const [arrow, importers] of [...arrows].sort()) console.log(`  ${arrow}: ${importers.size}`);
